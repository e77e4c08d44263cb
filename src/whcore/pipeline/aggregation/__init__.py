"""From run records to the tidy tables every figure and claim reads: one module per experiment
(``spectrum``, ``synthetic``, ``real``, and ``proteingym``: ProteinGym's supervised protocol on
one dataset) on the model selection they share (``records``).

Each experiment's function returns {table name: DataFrame}; the aggregation job
(``whcore.pipeline.jobs.aggregate``) runs the one its experiment's registry entry names
(``whcore.pipeline.experiments``), and logs the line its ``log_line`` function writes.
"""

from __future__ import annotations

from .proteingym import fold_means, proteingym_tables
from .real import real_tables
from .records import (
    HYPERPARAMETERS,
    divergence_report,
    forward_fill_epochs,
    parquet_files,
    read_runs,
    run_summaries,
    select_models,
    selected_divergence,
    summarize,
    variant_names,
)
from .spectrum import spectrum_tables
from .synthetic import synthetic_tables

__all__ = [
    "HYPERPARAMETERS",
    "divergence_report",
    "fold_means",
    "forward_fill_epochs",
    "parquet_files",
    "proteingym_tables",
    "read_runs",
    "real_tables",
    "run_summaries",
    "select_models",
    "selected_divergence",
    "spectrum_tables",
    "summarize",
    "synthetic_tables",
    "variant_names",
]
