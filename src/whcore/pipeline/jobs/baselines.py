"""The baselines job: a baseline family's grid on one split of a dataset (the networks' split)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .spec import DataSplit, JobSpec

__all__ = ["BaselinesSpec", "baselines_job"]


@dataclass(frozen=True)
class BaselinesSpec(JobSpec):
    """A baseline family's grid on one split of a dataset (the networks' split)."""

    KIND, SUBCOMMAND, OUTPUTS = "baselines", "baselines", ("records",)
    HELP = "fit a baseline family's grid on one split of a dataset"
    THREADS = True

    dataset: str
    family: str
    grid: dict
    data: DataSplit
    outputs: dict

    def inputs(self) -> tuple[str, ...]:
        return (self.data.path,)

    def run(self, args, outputs) -> None:
        from ..analyses.baselines import select_best
        from ..runtime.provenance import provenance

        start = time.perf_counter()
        records = baselines_job(self, args.threads, log=lambda m: print(m, flush=True))
        wall_time = time.perf_counter() - start
        out = outputs.table(
            "records", records, threads=args.threads, wall_time=wall_time, provenance=provenance()
        )
        best = select_best(records).iloc[0]
        print(
            f"wrote {out}: {len(records)} grid points; validation-best test R^2 "
            f"{best['test_r2']:.4f}, {wall_time:.1f}s"
        )


def baselines_job(spec: BaselinesSpec, threads: int = 1, log=print):
    """A baselines job's records: its family's grid on its split (a subsample, or a held-out
    fold of ProteinGym's protocol, scored also by the test split's Spearman correlation)."""
    from ...data.loading import load_table_split
    from ..analyses.baselines import fit_grid

    data, unit = load_table_split(spec.data)
    held_out = spec.data.folds is not None
    records = fit_grid(data, spec.family, spec.grid, unit, threads, log, ranks=held_out)
    return records.assign(dataset=spec.dataset, **spec.data.identity(data))


Spec = BaselinesSpec
