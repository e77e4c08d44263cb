"""The job contract: a validated workflow config -> every job, its output paths and its spec.

Snakemake asks it, by output path, for each job's spec and inputs (the paths themselves come
from ``layout``, the kinds of job from ``jobs.KINDS``); the ``whcore`` subcommands take that
spec. A spec holds exactly what determines the job's result, in canonical form (defaults
filled, integral numbers as integers, keys sorted), including its outputs; the device,
threads, data mirror and log frequency are passed beside it (``environment.job_environment``),
so changing them never reruns a job. The jobs are built one experiment at a time
(``synthetic``, ``real``, ``analyses``, ``reports``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config.validation import load_config
from ..experiments import own_data_only
from ..jobs import KINDS
from ..runtime.canonical import canonical_json
from ..runtime.layout import matches
from .analyses import add_analyses
from .base import Job, Plan, memory_mb
from .cells import Cells
from .real import add_epistasis, add_own_data, add_real
from .reports import add_reports, aggregate_inputs
from .synthetic import add_spectrum, add_synthetic

__all__ = ["SUBCOMMANDS", "Contract", "Job", "contract_of", "load_contract", "own_data_only"]

# The `whcore` subcommand that runs each kind of job (it takes the job's spec with --spec).
SUBCOMMANDS = {kind: spec.SUBCOMMAND for kind, spec in KINDS.items()}
# The builders, in order: a later one reads what an earlier one planned (the targets the
# training reads, the training an aggregation reads).
BUILDERS = (
    add_spectrum,
    add_synthetic,
    add_own_data,
    add_real,
    add_analyses,
    add_reports,
    add_epistasis,
)


class Contract(Plan):
    """Every job of a validated config, and what the workflow and the command line ask of
    them."""

    def __init__(self, config: dict):
        super().__init__(config)
        for build in BUILDERS:
            build(self)

    def job(self, path: str) -> Job:
        """The job writing ``path``, or a clear error for a path outside the configured grid."""
        if path not in self.jobs:
            raise ValueError(
                f"{path} is not part of the configured grid; request a figure, an experiment's "
                "tables or `all` instead of an arbitrary run file"
            )
        return self.jobs[path]

    def written_by(self, job: Job) -> list[str]:
        """Every path ``job`` writes: its spec's outputs (a figure's stem as its PDF and PNG)."""
        return job.spec.written()

    def all_outputs(self) -> dict[str, Job]:
        """Every output path of every job -> the job writing it."""
        return {path: job for job in self.jobs.values() for path in job.spec.written()}

    def job_writing(self, path: str) -> Job | None:
        """The job writing ``path``: any of its outputs, or a file inside an output folder (a
        training job's records or spectra); None for a path no job of this config writes."""
        path = os.path.normpath(path)
        outputs = self.all_outputs()
        if path in outputs:
            return outputs[path]
        job = outputs.get(os.path.dirname(path))  # a configuration's file in a job's folder
        return job if job is not None and job.spec.FOLDERS else None

    def command_inputs(self, job: Job) -> dict[str, list[str]]:
        """The file options its subcommand takes beside the spec: {option: [paths]}."""
        return job.spec.command_inputs(job.inputs, self)

    def aggregate_inputs(self, experiment: str, dataset: str | None = None) -> dict:
        """An aggregation's input files by role (the `whcore aggregate` options)."""
        return aggregate_inputs(self, experiment, dataset)

    def spec_of(self, pattern: str):
        """A params function for a rule whose output is ``pattern``: wildcards -> spec JSON.
        (A function of the wildcards only, so that Snakemake tracks the spec as a param.)"""
        return lambda wildcards: self.job(pattern.format(**wildcards)).spec_json

    def mem_mb_of(self, pattern: str, unknown: int = 8000):
        """A resources function: the memory (MiB) the job of ``pattern`` asks for, ``attempt``
        times it on a retry; ``unknown`` where its table's size is not known before it runs."""
        return lambda wildcards, attempt: (
            attempt * (self.job(pattern.format(**wildcards)).mem_mb or unknown)
        )

    def inputs_of(self, pattern: str):
        return lambda wildcards: list(self.job(pattern.format(**wildcards)).inputs)

    def cell_jobs(self, cells: Cells, wildcards) -> list[Job]:
        """The jobs of the cell that the rule of ``cells`` runs for ``wildcards``, in the
        cell's order."""
        patterns = cells.outputs(self.layout)["records"]
        return [self.job(pattern.format(**wildcards)) for pattern in patterns]

    def cell_spec_of(self, cells: Cells):
        """A params function for a cell's rule: wildcards -> its jobs' specs, a JSON list."""
        return lambda wildcards: canonical_json(
            [job.spec.to_dict() for job in self.cell_jobs(cells, wildcards)]
        )

    def cell_inputs_of(self, cells: Cells):
        return lambda wildcards: sorted(
            {path for job in self.cell_jobs(cells, wildcards) for path in job.inputs}
        )

    def cell_mem_mb_of(self, cells: Cells, unknown: int = 8000):
        """As ``mem_mb_of``, for a cell's rule: its jobs' networks in one process."""

        def mem_mb(wildcards, attempt):
            jobs = self.cell_jobs(cells, wildcards)
            spec = jobs[0].spec
            table = self.footprints.get(spec.outputs["records"])
            if table is None:
                return attempt * unknown
            return attempt * memory_mb(
                spec.method, spec.grid, spec.training, *table, units=len(jobs)
            )

        return mem_mb

    def trained_alone(self) -> list[str]:
        """The datasets whose training jobs run one job each: those no cell holds."""
        celled = [
            pattern for cells in self.cells for pattern in cells.outputs(self.layout)["records"]
        ]
        alone, held = set(), set()
        for path, job in self.jobs.items():
            if job.kind == "train" and matches(self.layout.records, path):
                dataset = job.labels["dataset"]
                (held if any(matches(p, path) for p in celled) else alone).add(dataset)
        if alone & held:  # the rules tell a cell's jobs by their dataset
            raise ValueError(f"datasets with jobs in cells and alone: {sorted(alone & held)}")
        return sorted(alone)

    def targets(self) -> list[str]:
        """What `all` builds: every final output (each figure's PDF and PNG, every table, the
        claims report, its JSON and the provenance table), so that any of them lost after a
        run is rebuilt, never reported as "Nothing to be done"."""
        return sorted(
            path for job in self.jobs.values() if job.spec.FINAL for path in job.spec.written()
        )

    def figures(self) -> list[str]:
        """The ids of the figures of the enabled experiments."""
        return [job.labels["figure"] for job in self.jobs.values() if job.kind == "figure"]

    def jobs_of(self, kind: str) -> list[Job]:
        """The jobs of one kind."""
        return [job for job in self.jobs.values() if job.kind == kind]


def load_contract(config: dict | str, schema_path: str) -> Contract:
    """The contract of a configuration (a dict, validated and filled in place, or a YAML
    file's path), validated against the workflow schema first."""
    return Contract(load_config(config, schema_path))


def contract_of(args) -> Contract:
    """The contract of a command's ``args.config`` validated against its ``args.schema``
    (``config.schema.add_schema_option``), which must exist."""
    if not Path(args.schema).is_file():
        raise ValueError(
            f"--schema {args.schema}: no such file; leave --schema out (the schema this whcore "
            "ships) or pass a checkout's workflow/schemas/config.schema.yaml"
        )
    return load_contract(args.config, str(args.schema))
