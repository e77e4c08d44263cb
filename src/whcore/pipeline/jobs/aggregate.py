"""The aggregate job: an experiment's tidy tables from its run records (model selection on
validation); the tables each experiment's aggregation writes are its registry entry's
(``experiments.EXPERIMENTS``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..experiments import EXPERIMENTS, ROLES, aggregated, resolve
from .spec import JobSpec, SpecError, optional

__all__ = ["AggregateSpec"]


@dataclass(frozen=True)
class AggregateSpec(JobSpec):
    """An experiment's tidy tables from its run records (model selection on validation)."""

    KIND, SUBCOMMAND, OUTPUTS = "aggregate", "aggregate", ()
    HELP = "run records -> an experiment's tidy tables"
    FINAL = True

    experiment: str
    outputs: dict
    figure_train_size: int | None = optional(None)  # the spectrum experiment's
    dataset: str | None = optional(None)  # one aggregation per dataset (the protocol's)

    def check(self, source: str) -> None:
        names = [e.name for e in aggregated()]
        if self.experiment not in names:
            raise SpecError(
                f"{source}: field experiment: {self.experiment!r} is not one of {', '.join(names)}"
            )
        experiment = EXPERIMENTS[self.experiment]
        if bool(experiment.per_dataset) != (self.dataset is not None):
            raise SpecError(
                f"{source}: field dataset: given for (and only for) an experiment of one table "
                f"per dataset ({', '.join(e.name for e in aggregated() if e.per_dataset)})"
            )
        if sorted(self.outputs) != sorted(experiment.tables):
            raise SpecError(f"{source}: field outputs must name {', '.join(experiment.tables)}")
        for key in experiment.settings:
            if getattr(self, key) is None:
                raise SpecError(f"{source}: field {key}: missing ({self.experiment})")

    def command_inputs(self, inputs, plan) -> dict[str, list[str]]:
        roles = plan.aggregate_inputs(self.experiment, self.dataset)
        return {f"--{role}": paths for role, paths in roles.items()}

    @classmethod
    def add_arguments(cls, parser) -> None:
        for role, help in ROLES.items():
            parser.add_argument(f"--{role}", nargs="*", default=[], help=help)

    def tables(self, runs=(), spectra=(), targets=(), baselines=()) -> dict:
        """This aggregation's tables ({name: frame}, the names its outputs give)."""
        experiment = EXPERIMENTS[self.experiment]
        inputs = {"runs": runs, "spectra": spectra, "targets": targets, "baselines": baselines}
        settings = {key: getattr(self, key) for key in experiment.settings}
        return experiment.aggregate(inputs, settings)

    def run(self, args, outputs) -> None:
        from ..runtime.provenance import provenance

        tables = self.tables(*(getattr(args, role) for role in ROLES))
        for role, frame in tables.items():
            path = outputs.table(role, frame, provenance=provenance())
            print(f"wrote {path}: {len(frame)} rows")
        print(resolve(EXPERIMENTS[self.experiment].log_line)(tables))


Spec = AggregateSpec
