"""Job specs: one typed spec per kind of job (``KINDS``), read from and written as canonical JSON.

A spec holds exactly what determines one job's result, its outputs included; the contract
builds every job's spec from a configuration, and each ``whcore`` subcommand reads its kind's.
"""

from .base import JobSpec, SpecError, read_spec
from .kinds import (
    AGGREGATE_TABLES,
    AblationSpec,
    AggregateSpec,
    BaselinesSpec,
    ClaimsSpec,
    DownloadUserSpec,
    EntacmaeaEnergySpec,
    EpistasisFigureSpec,
    EpistasisSpec,
    FigureSpec,
    TargetSpec,
    UserDataSpec,
)
from .train import SPEC_SCHEMA, DataSplit, TrainSpec, load_spec, training_defaults, validate_spec

__all__ = [
    "AGGREGATE_TABLES",
    "KINDS",
    "SPEC_SCHEMA",
    "AblationSpec",
    "AggregateSpec",
    "BaselinesSpec",
    "ClaimsSpec",
    "DataSplit",
    "DownloadUserSpec",
    "EntacmaeaEnergySpec",
    "EpistasisFigureSpec",
    "EpistasisSpec",
    "FigureSpec",
    "JobSpec",
    "SpecError",
    "TargetSpec",
    "TrainSpec",
    "UserDataSpec",
    "load_spec",
    "read_spec",
    "training_defaults",
    "validate_spec",
]

# Every kind of job by the contract's name for it.
KINDS: dict[str, type[JobSpec]] = {
    kind.KIND: kind
    for kind in (
        TargetSpec,
        TrainSpec,
        BaselinesSpec,
        AblationSpec,
        EntacmaeaEnergySpec,
        AggregateSpec,
        FigureSpec,
        ClaimsSpec,
        DownloadUserSpec,
        UserDataSpec,
        EpistasisSpec,
        EpistasisFigureSpec,
    )
}
