"""The job contract: a validated workflow config -> every job, its output paths and its spec.

Snakemake asks it, by output path, for each job's spec and inputs (the paths themselves come
from ``layout``, the jobs from ``plan``); the ``whcore`` subcommands take that spec. A spec
holds exactly what determines the job's result, in canonical form (defaults filled, integral
numbers as integers, keys sorted), including its outputs; the device, threads, data mirror and
log frequency are passed beside it (``environment.job_environment``), so changing them never
reruns a job.
"""

from __future__ import annotations

import os

from .config import load_config
from .jobspec import AGGREGATE_TABLES, KINDS
from .plan import Job, JobPlan

__all__ = [
    "AGGREGATE_TABLES",
    "Contract",
    "Job",
    "SUBCOMMANDS",
    "load_contract",
]

# The `whcore` subcommand that runs each kind of job (it takes the job's spec with --spec).
SUBCOMMANDS = {kind: spec.SUBCOMMAND for kind, spec in KINDS.items()}
# Jobs whose output is a figure stem (written as .pdf and .png).
FIGURE_KINDS = ("figure", "epistasis_figure")


class Contract(JobPlan):
    """Every job of a validated config (``JobPlan``) and what the workflow asks of them."""

    # -- lookups used by the rules

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
        outputs = job.spec.outputs.values()
        if job.kind in FIGURE_KINDS:
            return [f"{stem}{suffix}" for stem in outputs for suffix in (".pdf", ".png")]
        return list(outputs)

    def all_outputs(self) -> dict[str, Job]:
        """Every output path of every job -> the job writing it."""
        return {path: job for job in self.jobs.values() for path in self.written_by(job)}

    def job_writing(self, path: str) -> Job | None:
        """The job writing ``path``: any of its outputs, or a file inside an output folder (a
        training job's records or spectra); None for a path no job of this config writes."""
        path = os.path.normpath(path)
        outputs = self.all_outputs()
        if path in outputs:
            return outputs[path]
        folder = os.path.dirname(path)  # a configuration's file in a training job's folder
        job = outputs.get(folder)
        return job if job is not None and job.kind == "train" else None

    def command_inputs(self, job: Job) -> dict[str, list[str]]:
        """The file options its subcommand takes beside the spec: {option: [paths]}."""
        if job.kind == "aggregate":
            inputs = self.aggregate_inputs(job.labels["experiment"], job.labels.get("dataset"))
            return {f"--{role}": paths for role, paths in inputs.items()}
        if job.kind in ("figure", "claims", "epistasis_figure"):
            return {"--tables": list(job.inputs)}
        if job.kind == "epistasis":
            return {"--selected": [job.inputs[1]]}
        return {}

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

    def targets(self) -> list[str]:
        """What `all` builds: every final output (each figure's PDF and PNG, every table, the
        claims report, its JSON and the provenance table), so that any of them lost after a
        run is rebuilt, never reported as "Nothing to be done"."""
        outputs = []
        for job in self.jobs.values():
            if job.kind in FIGURE_KINDS:
                stem = job.spec.outputs["stem"]
                outputs += [f"{stem}.pdf", f"{stem}.png"]
            elif job.kind in ("aggregate", "ablation", "entacmaea_energy", "claims", "epistasis"):
                outputs += job.spec.outputs.values()
        return sorted(outputs)

    def figures(self) -> list[str]:
        """The ids of the figures of the enabled experiments."""
        return [job.labels["figure"] for job in self.jobs.values() if job.kind == "figure"]


def load_contract(config: dict | str, schema_path: str) -> Contract:
    """The contract of a configuration (a dict, validated and filled in place, or a YAML
    file's path), validated against the workflow schema first."""
    return Contract(load_config(config, schema_path))
