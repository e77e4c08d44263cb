"""The aggregate job: an experiment's tidy tables from its run records (model selection on
validation); ``TABLES`` is the one list of the tables each experiment's aggregation writes."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec, SpecError, optional

__all__ = ["TABLES", "AggregateSpec"]

# The tables each experiment's aggregation writes.
TABLES = {
    "spectrum": ("spectrum_selected", "spectrum_epochs", "spectrum_heatmap"),
    "synthetic": ("synthetic_selected", "synthetic_summary", "synthetic_curves", "synthetic_runs"),
    "real": ("real_selected", "real_summary"),
    "protocol": ("protocol",),  # one per dataset under ProteinGym's protocol
}
# The file options of `whcore aggregate`, by the role of the files in an aggregation.
ROLES = {
    "runs": "network run records (Parquet)",
    "spectra": "spectrum experiment: spectra files",
    "targets": "spectrum experiment: the g* files",
    "baselines": "real data: baseline records",
}


@dataclass(frozen=True)
class AggregateSpec(JobSpec):
    """An experiment's tidy tables from its run records (model selection on validation)."""

    KIND, SUBCOMMAND, OUTPUTS = "aggregate", "aggregate", ()
    HELP = "run records -> an experiment's tidy tables"
    FINAL = True

    experiment: str
    outputs: dict
    figure_train_size: int | None = optional(None)  # the spectrum experiment's
    dataset: str | None = optional(None)  # the protocol's: one aggregation per dataset

    def check(self, source: str) -> None:
        if self.experiment not in TABLES:
            raise SpecError(
                f"{source}: field experiment: {self.experiment!r} is not one of {', '.join(TABLES)}"
            )
        if (self.experiment == "protocol") != (self.dataset is not None):
            raise SpecError(f"{source}: field dataset: given for (and only for) protocol")
        tables = TABLES[self.experiment]
        if sorted(self.outputs) != sorted(tables):
            raise SpecError(f"{source}: field outputs must name {', '.join(tables)}")
        if self.experiment == "spectrum" and self.figure_train_size is None:
            raise SpecError(f"{source}: field figure_train_size: missing (spectrum)")

    def command_inputs(self, inputs, plan) -> dict[str, list[str]]:
        roles = plan.aggregate_inputs(self.experiment, self.dataset)
        return {f"--{role}": paths for role, paths in roles.items()}

    @classmethod
    def add_arguments(cls, parser) -> None:
        for role, help in ROLES.items():
            parser.add_argument(f"--{role}", nargs="*", default=[], help=help)

    def tables(self, runs=(), spectra=(), targets=(), baselines=()) -> dict:
        """This aggregation's tables ({name: frame}, the names its outputs give)."""
        from .. import aggregation

        if self.experiment == "spectrum":
            return aggregation.spectrum_tables(runs, spectra, targets, self.figure_train_size)
        if self.experiment == "synthetic":
            return aggregation.synthetic_tables(runs)
        if self.experiment == "protocol":
            return aggregation.protocol_tables(runs, baselines)
        return aggregation.real_tables(runs, baselines)

    def run(self, args, outputs) -> None:
        from ..aggregation import divergence_report
        from ..runtime.provenance import provenance

        tables = self.tables(*(getattr(args, role) for role in ROLES))
        for role, frame in tables.items():
            path = outputs.table(role, frame, provenance=provenance())
            print(f"wrote {path}: {len(frame)} rows")
        if self.experiment == "protocol":
            summary = tables["protocol"].drop_duplicates(["scheme", "method"])
            for row in summary.itertuples():
                print(
                    f"{row.scheme} {row.method}: Spearman {row.spearman_mean:.4f} "
                    f"+- {row.spearman_se:.4f} over {row.folds} folds"
                )
            return
        print(divergence_report(tables[f"{self.experiment}_selected"]))


Spec = AggregateSpec
