"""What one unit of each experiment cost in a finished run, from Snakemake's own records.

Snakemake records each job's start and end (``.snakemake/metadata`` of the run's working
folder, one record per output; a job of several outputs is counted once). A job's cost is its
wall-clock seconds from start to end: process start-up, imports, data loading, training,
evaluation and writing are all counted; time Snakemake spends between jobs (scheduling,
checking files) and jobs that ran in another working folder are not. A job holds its threads'
cores for its wall time (the ``--threads N`` of its recorded command; 1 where it has none): the
ablation's and baselines' 2 threads keep both cores of a 2-core run, so they cost twice their
wall time in core-seconds, which is what a budget in core-hours on N cores spends. The jobs that
grow with an experiment's units (its training, targets, baselines, forests: by output path or
rule) are its cost; divided by the run's units of it, the cost of one unit. Every other job
(download, binarize, aggregation, figures, claims) is a fixed cost that more units leave about
unchanged. Epoch times in the run records would leave out start-up and evaluation, and exist for
networks only, so they are not used."""

from __future__ import annotations

import re
from pathlib import Path

from ..runtime.job_records import job_records

__all__ = ["job_seconds", "unit_costs"]

THREADS = re.compile(r"--threads[ =](\d+)")  # how every rule passes its threads to whcore


def threads_of(record: dict) -> int:
    """The threads a recorded job held: its command's ``--threads N``, else 1."""
    found = THREADS.search(str(record.get("shellcmd") or ""))
    return max(1, int(found.group(1))) if found else 1


def job_seconds(workdir: str | Path) -> list[tuple[str, str, float]]:
    """(rule, first output, core-seconds: wall seconds times threads) of every finished job
    Snakemake recorded under ``workdir``/.snakemake/metadata."""
    jobs = {}
    for output, record in job_records(workdir):
        try:
            start, end = float(record["starttime"]), float(record["endtime"])
        except (ValueError, KeyError, TypeError):
            continue  # an unfinished job's record
        # One job of several outputs has a record per output, with the same job hash (their
        # times differ by the microseconds between writing them).
        key = (record.get("rule", ""), record.get("job_hash", round(start)))
        first = jobs.get(key, (output, start, end, threads_of(record)))
        jobs[key] = (min(first[0], output), min(first[1], start), max(first[2], end), first[3])
    return [
        (rule, output, (end - start) * threads)
        for (rule, _), (output, start, end, threads) in sorted(jobs.items())
    ]


def experiment_of(rule: str, output: str, run: str, rules: dict[str, str]) -> str | None:
    """The experiment whose units a job's cost grows with; None for a fixed job. ``rules``:
    the rules whose jobs belong to an experiment whatever their output path ({rule:
    experiment}, ``experiments.cost_rules()``)."""
    if rule in rules:
        return rules[rule]
    parts = Path(output).parts
    root = ("results", run)
    if parts[:2] == root and len(parts) > 3 and parts[2] in ("runs", "spectra", "synthetic"):
        return parts[3]  # runs/<experiment>/..., spectra/<experiment>/..., targets
    return None


def unit_costs(
    workdir: str | Path, run: str, units: dict[str, int], rules: dict[str, str]
) -> tuple[dict[str, float], float]:
    """Core-seconds per unit of each experiment of ``units`` (the run's units of it) and those
    of the fixed jobs, from the run ``run`` in ``workdir`` (``rules``: as ``experiment_of``
    reads them); an error naming the folder where Snakemake left no records of its jobs."""
    jobs = job_seconds(workdir)
    if not jobs:
        raise ValueError(
            f"{Path(workdir) / '.snakemake' / 'metadata'}: no finished job recorded, so no unit "
            "cost can be measured; give the run's working folder (the one holding .snakemake/ "
            "and results/<run>/) or the costs per unit with --costs FILE"
        )
    spent = dict.fromkeys(units, 0.0)
    fixed = 0.0
    for rule, output, seconds in jobs:
        experiment = experiment_of(rule, output, run, rules)
        if experiment in spent:
            spent[experiment] += seconds
        else:
            fixed += seconds
    return {e: spent[e] / units[e] for e in units if spent[e] > 0}, fixed
