"""The leaderboard job: a user's ProteinGym table scored as ProteinGym's supervised leaderboard
scores an assay (``whcore.pipeline.analyses.leaderboard``): singles only, refit on all four training
folds, one Spearman over the pooled out-of-fold predictions beside the per-fold mean."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .spec import JobSpec

__all__ = ["LeaderboardSpec"]


@dataclass(frozen=True)
class LeaderboardSpec(JobSpec):
    """A user's ProteinGym table scored as the supervised leaderboard scores an assay."""

    KIND, SUBCOMMAND, OUTPUTS = "leaderboard", "leaderboard", ("table",)
    HELP = (
        "score your ProteinGym table as the supervised leaderboard does (spec fields: "
        "dataset, raw, source, schemes, methods, seed; outputs: table)"
    )

    dataset: str
    raw: str
    source: dict
    schemes: list
    methods: list
    outputs: dict
    seed: int = 0

    def inputs(self) -> tuple[str, ...]:
        return (self.raw,)

    def run(self, args, outputs) -> None:
        from ...data.custom import read_table_file, source_settings
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
        scores = leaderboard_scores(table, self.schemes, self.methods, self.seed)
        meta = {"wall_time": time.perf_counter() - start, "provenance": provenance("cpu")}
        out = outputs.table("table", scores.assign(dataset=self.dataset), **meta)
        best = scores.loc[scores.groupby("scheme")["pooled_spearman"].idxmax()]
        for row in best.itertuples():
            print(
                f"wrote {out}: {row.scheme}: best {row.method}, pooled Spearman "
                f"{row.pooled_spearman:.4f}"
            )


Spec = LeaderboardSpec
