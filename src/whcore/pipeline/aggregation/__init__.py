"""From run records to the tidy tables every figure and claim reads: one module per experiment
(``spectrum``, ``synthetic``, ``real``, and ``protocol``: ProteinGym's supervised protocol on
one dataset) on the model selection they share (``records``).

Each experiment's function returns {table name: DataFrame}; ``experiment_tables`` runs the one
an aggregation job's spec names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .protocol import protocol_tables
from .real import real_tables
from .records import (
    HYPERPARAMETERS,
    divergence_report,
    forward_fill_epochs,
    parquet_files,
    read_runs,
    run_summaries,
    select_models,
    summarize,
    variant_names,
)
from .spectrum import spectrum_tables
from .synthetic import synthetic_tables

if TYPE_CHECKING:
    from ..jobs.aggregate import AggregateSpec

__all__ = [
    "HYPERPARAMETERS",
    "divergence_report",
    "experiment_tables",
    "forward_fill_epochs",
    "parquet_files",
    "protocol_tables",
    "read_runs",
    "real_tables",
    "run_summaries",
    "select_models",
    "spectrum_tables",
    "summarize",
    "synthetic_tables",
    "variant_names",
]


def experiment_tables(spec: AggregateSpec, runs=(), spectra=(), targets=(), baselines=()) -> dict:
    """An aggregation job's tables ({name: frame}, the names its spec's outputs give)."""
    if spec.experiment == "spectrum":
        return spectrum_tables(runs, spectra, targets, spec.figure_train_size)
    if spec.experiment == "synthetic":
        return synthetic_tables(runs)
    if spec.experiment == "protocol":
        return protocol_tables(runs, baselines)
    return real_tables(runs, baselines)
