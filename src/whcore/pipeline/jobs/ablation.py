"""The ablation job: a random forest's exact spectrum, pruned by degree and by amplitude
(Figure 5c)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec, optional

__all__ = ["AblationSpec", "ablation_job"]


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
        from ..runtime.provenance import provenance

        table, info = ablation_job(self, args.threads, log=lambda m: print(m, flush=True))
        out = outputs.table("table", table, **info, provenance=provenance())
        print(f"wrote {out}: {len(table)} rows")


def ablation_job(spec: AblationSpec, threads: int = 1, log=print):
    """An ablation job's table (its dataset's name in a first column): one forest, split and
    pruning per seed ``spec.seed``, ``spec.seed + 1``, ... (``spec.repeats`` of them, the
    ablation claim's units), and the summary numbers of each."""
    import pandas as pd

    from ...data.loading import read_table
    from ..analyses.ablation import run_ablation

    x, y = read_table(spec.data)
    tables, infos = [], []
    for seed in range(spec.seed, spec.seed + spec.repeats):
        table, info = run_ablation(
            x,
            y,
            spec.train_size,
            spec.test_size,
            spec.max_depth,
            spec.n_trees,
            spec.steps,
            seed,
            spec.standardize,
            threads,
            log=log,
        )
        tables.append(table)
        infos.append(info)
    table = pd.concat(tables, ignore_index=True)
    table.insert(0, "dataset", spec.dataset)
    return table, {"forests": infos}


Spec = AblationSpec
