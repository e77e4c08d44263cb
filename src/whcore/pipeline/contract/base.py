"""The plan's machinery: the ``Job`` type, the ``Plan`` every experiment's builders add jobs to,
and the parts the experiments share (a training job, a real dataset's split, table paths)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...core.footprint import job_memory_mb, step_rows
from ..experiments import EXPERIMENTS, own_data_only
from ..jobs import JobSpec
from ..jobs.train import TrainSpec
from ..runtime.canonical import canonical
from ..runtime.layout import Layout
from .cells import Cells

__all__ = ["Job", "Plan"]


def _per_dataset(table: str):
    """The experiment of one ``table`` per dataset (``<table>_<dataset>``), or None."""
    for entry in EXPERIMENTS.values():
        if entry.per_dataset and table in (*entry.tables, *entry.claim_tables):
            return entry
    return None


@dataclass(frozen=True)
class Job:
    """One job: its spec (of its kind, with its outputs) and the files it reads."""

    spec: JobSpec = field(hash=False)
    inputs: tuple[str, ...] = ()
    labels: dict = field(default_factory=dict, hash=False)  # what the workflow selects on
    mem_mb: int | None = None  # what a scheduler is asked for (training jobs)

    @property
    def kind(self) -> str:
        return self.spec.KIND

    @property
    def spec_json(self) -> str:
        return self.spec.to_json()


def memory_mb(method: str, grid: list[dict], training, rows: int, n: int, units: int = 1) -> int:
    """The memory a training job asks a scheduler for (``whcore.core.footprint``), from its
    training settings (a ``jobs.train.Training``) and the (rows, n) of its table; ``units``:
    the jobs of a cell trained as one (``cells``), each with its own table."""
    members = units * len(training.seeds) * len(grid) if training.vectorize else 1
    step = step_rows(method, grid, n, training.batch_size)
    return job_memory_mb(n, training.width, members, step, units * rows * (n + 1))


class Plan:
    """Jobs keyed by their first output path, and what the experiments' builders share."""

    def __init__(self, config: dict):
        self.config = config
        self.layout = Layout(config["run_name"])
        self.jobs: dict[str, Job] = {}
        self.targets_of: dict[str, dict[str, dict]] = {}  # experiment -> g* draw -> its spec
        # the rules whose cells' jobs run as one (config key stack_units)
        self.cells: list[Cells] = []
        self.footprints: dict[str, tuple[int, int]] = {}  # training job -> (rows, n) of its table

    def add(
        self,
        path: str,
        kind: type[JobSpec],
        spec: dict,
        inputs: tuple[str, ...] | None = None,
        labels: dict | None = None,
    ) -> Job:
        """The job of ``kind`` whose first output is ``path``: its spec checked (the one
        check, as when the job starts) and canonical, its inputs those its spec names unless
        given."""
        spec = kind.from_dict(canonical(spec), f"job {path}")
        inputs = spec.inputs() if inputs is None else inputs
        self.jobs[path] = Job(spec, inputs, labels or {})
        return self.jobs[path]

    def outputs(self, kind: str, **labels) -> list[str]:
        return sorted(
            path
            for path, job in self.jobs.items()
            if job.kind == kind and all(job.labels.get(k) == v for k, v in labels.items())
        )

    def enabled(self, experiment: str) -> bool:
        """Whether this config runs ``experiment`` (its registry entry's ``runs``)."""
        return EXPERIMENTS[experiment].runs(self.config)

    def own_data_only(self) -> bool:
        return own_data_only(self.config)

    def add_train(
        self,
        experiment,
        dataset,
        group,
        settings,
        data,
        training,
        labels,
        runtime,
        table=None,
        fold=None,
    ):
        """One training job: a group of configurations (method, group tag, [params]) on one
        data split (for the protocol, a held-out fold: ``fold``, (scheme, fold)). Runtime
        cells (those whose times a figure or claim reads) train one model at a time, so that
        their times are per model, as the paper measured them; elsewhere a stacked model's
        epoch time is shared equally by its members (records: stack_size). ``table``: (rows,
        n) of the data it reads, or None where unknown before it is made."""
        method, tag, params_list = group
        if fold is None:
            wildcards = {
                "experiment": experiment,
                "dataset": dataset,
                "method": method,
                "group": tag,
                "size": data["train_size"],
                "dseed": data["data_seed"],
            }
            outputs = {"records": self.layout.records.format(**wildcards)}
        else:
            scheme, held_out = fold
            records = self.layout.proteingym_records.format(
                dataset=dataset, scheme=scheme, method=method, group=tag, fold=held_out
            )
            outputs = {"records": records}
        if experiment == "spectrum":
            outputs["spectra"] = self.layout.spectra.format(**wildcards)
        training = {**training, "seeds": list(settings["seeds"])}
        if runtime:
            training["vectorize"] = False
        spec = {
            "labels": labels,
            "method": method,
            "grid": params_list,
            "data": data,
            "training": training,
            "spectrum": experiment == "spectrum",
            "outputs": outputs,
        }
        path = outputs["records"]
        job = self.add(path, TrainSpec, spec, labels={"experiment": experiment, "dataset": dataset})
        if table is not None:
            memory = memory_mb(method, params_list, job.spec.training, *table)
            self.jobs[path] = replace(job, mem_mb=memory)
            self.footprints[path] = table

    def stack(self, cells: Cells) -> None:
        """Run the jobs of each cell of an experiment as one, where the config asks for it
        (``stack_units``) and a cell holds several units."""
        planned = any(
            job.labels.get("experiment") == cells.experiment for job in self.jobs.values()
        )
        if self.config["stack_units"] and len(cells.units) > 1 and planned:
            self.cells += cells.split()

    def real_data(self, name: str, ds: dict, size: int, dseed: int) -> dict:
        """The split of a real dataset: networks and baselines read exactly this."""
        return {
            "source": "table",
            "path": Layout.data(name),
            "train_size": size,
            "val_size": ds["val_size"],
            "test_size": ds["test_size"],
            "data_seed": dseed,
            "standardize": self.config["real"]["standardize"],
        }

    def tables(self, names) -> list[str]:
        """The paths of tables by name (an experiment's of one table per dataset: one each,
        ``<name>_<dataset>``)."""
        paths = []
        for name in names:
            entry = _per_dataset(name)
            if entry is not None:
                paths += [
                    self.layout.table_path(f"{name}_{d}") for d in entry.datasets(self.config)
                ]
            else:
                paths.append(self.layout.table_path(name))
        return paths
