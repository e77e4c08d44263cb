"""The ablation job: a random forest's exact spectrum, pruned by degree and by amplitude
(Figure 5c)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec, optional

__all__ = ["AblationSpec"]


@dataclass(frozen=True)
class AblationSpec(JobSpec):
    """A random forest's exact spectrum, pruned by degree and by amplitude (Figure 5c)."""

    KIND, SUBCOMMAND, OUTPUTS = "ablation", "ablation", ("table",)
    HELP = "prune a random forest's exact spectrum (Figure 5c)"
    FINAL, THREADS = True, True

    dataset: str
    data: str
    train_size: int
    test_size: int
    max_depth: int
    n_trees: int
    steps: int
    seed: int
    outputs: dict
    standardize: bool = optional(True)
    repeats: int = optional(1)  # forests with seeds seed, seed + 1, ...

    def inputs(self) -> tuple[str, ...]:
        return (self.data,)

    def run(self, args, outputs) -> None:
        from ..ablation import ablation_job
        from ..provenance import provenance

        table, info = ablation_job(self, args.threads, log=lambda m: print(m, flush=True))
        out = outputs.table("table", table, **info, provenance=provenance())
        print(f"wrote {out}: {len(table)} rows")


Spec = AblationSpec
