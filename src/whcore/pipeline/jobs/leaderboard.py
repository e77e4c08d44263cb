"""The leaderboard job: a user's ProteinGym table scored as ProteinGym's supervised leaderboard
scores an assay (``whcore.pipeline.analyses.leaderboard``): singles only, refit on all four training
folds, one Spearman over the pooled out-of-fold predictions beside the per-fold mean. The
networks' grids and training are fields of the spec (the dataset's ``leaderboard`` key over the
mode's defaults, ``network_settings``), so changing them reruns the job."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from .spec import JobSpec, SpecError
from .train import Training, _check_configurations, training_defaults

__all__ = ["LeaderboardSpec", "network_settings"]

MAX_ENSEMBLE = 100  # a bound on what a spec may ask to train (every member trains every fold)


def network_settings(methods, grids: dict | None = None, training: dict | None = None):
    """(grids, training) of the networks among ``methods``: ``grids`` ({network: a methods
    key's grid}) and ``training`` (``TrainConfig``'s settings) over the mode's defaults
    (``NETWORK_GRIDS``, ``NETWORK_TRAINING``), every default written out."""
    from ..analyses.leaderboard import NETWORK_GRIDS, NETWORK_TRAINING, NETWORKS

    grids = grids or {}
    chosen = {m: grids.get(m, NETWORK_GRIDS[m]) for m in NETWORKS if m in methods}
    defaults = {key: getattr(NETWORK_TRAINING, key) for key in training_defaults()}
    return chosen, {**defaults, **(training or {})}


@dataclass(frozen=True)
class LeaderboardSpec(JobSpec):
    """A user's ProteinGym table scored as the supervised leaderboard scores an assay."""

    KIND, SUBCOMMAND, OUTPUTS = "leaderboard", "leaderboard", ("table",)
    HELP = (
        "score your ProteinGym table as the supervised leaderboard does (spec fields: "
        "dataset, raw, source, schemes, methods, grids, training, ensemble, seed; outputs: table)"
    )

    dataset: str
    raw: str
    source: dict
    schemes: list
    methods: list
    outputs: dict
    seed: int = 0
    grids: dict = dataclasses.field(default_factory=dict)  # {network: its grid}; default the mode's
    training: dict = dataclasses.field(default_factory=dict)  # the networks' TrainConfig settings
    ensemble: int = 1  # networks of their own seeds whose predictions a network's are the mean of

    def check(self, source: str) -> None:
        from ..analyses.grids import training_groups
        from ..analyses.leaderboard import NETWORKS

        super().check(source)
        for method in self.grids:
            if method not in NETWORKS:
                raise SpecError(
                    f"{source}: field grids.{method}: not one of the leaderboard's networks "
                    f"{list(NETWORKS)}. Fix: remove it"
                )
        for method, _, grid in training_groups(self.grids):
            _check_configurations(method, grid, source)
        self._training(source).check(source)
        if type(self.ensemble) is not int or not 1 <= self.ensemble <= MAX_ENSEMBLE:  # not a bool
            raise SpecError(
                f"{source}: field ensemble: {self.ensemble!r} is not a count of networks from 1 "
                f"to {MAX_ENSEMBLE}. Fix: set it to 1 for one network per method"
            )

    def _training(self, source: str = "--spec") -> Training:
        """The networks' training (the mode's defaults under the spec's), one seed: each fold's
        networks derive theirs from the spec's seed."""
        _, settings = network_settings(self.methods, self.grids, self.training)
        return Training.from_dict({**settings, "seeds": [self.seed]}, source, "training")

    def inputs(self) -> tuple[str, ...]:
        return (self.raw,)

    def run(self, args, outputs) -> None:
        from ...data.own_data import read_table_file, source_settings
        from ..analyses.leaderboard import leaderboard_scores
        from ..runtime.provenance import provenance

        settings = source_settings(self.source)
        table = read_table_file(Path(self.raw)).rename(
            columns={settings["mutant_column"]: "mutant", settings["target_column"]: "DMS_score"}
        )
        if "mutated_sequence" not in table:
            raise ValueError(
                f"{self.raw}: the leaderboard mode encodes column mutated_sequence, which the "
                "file lacks. Fix: add it (ProteinGym's files have it), or use protocol: proteingym"
            )
        start = time.perf_counter()
        grids, _ = network_settings(self.methods, self.grids)
        training = self._training().config("cpu", 0)
        scores = leaderboard_scores(
            table, self.schemes, self.methods, self.seed, grids, training, self.ensemble
        )
        meta = {"wall_time": time.perf_counter() - start, "provenance": provenance("cpu")}
        out = outputs.table("table", scores.assign(dataset=self.dataset), **meta)
        best = scores.loc[scores.groupby("scheme")["pooled_spearman"].idxmax()]
        for row in best.itertuples():
            print(
                f"wrote {out}: {row.scheme}: best {row.method}, pooled Spearman "
                f"{row.pooled_spearman:.4f}"
            )


Spec = LeaderboardSpec
