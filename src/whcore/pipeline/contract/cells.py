"""A cell's jobs run as one (config key ``stack_units``).

The units of a cell (the g* draws of one spectrum or synthetic setting, the subsamples of one
real dataset and train size) are training jobs that differ only in their data, labels and
outputs, so ``whcore train`` can take their specs as a list and train them as one stacked model
(``jobs.train.run_cell``), writing each job's outputs as the job alone would. The plan keeps
its jobs one unit each (every lookup, table, crate and ``whcore spec`` reads them): a cell is
how they run, one Snakemake rule per experiment whose outputs are the folders of a cell's
units, in the cell's order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..runtime.layout import Layout

__all__ = ["MAX_UNITS", "Cells"]
# The most units one job takes: its specs travel as one command-line argument (about 0.8 KB a
# unit; Linux takes 128 KiB), so a larger cell runs as several jobs of at most this many.
MAX_UNITS = 64


@dataclass(frozen=True)
class Cells:
    """The cells of one experiment as a rule sees them: the wildcard its units differ in
    (``field``) and that wildcard's value for each unit of a cell (``units``, which may hold
    the cell's own wildcards, ``n{n}_draw1``); ``part`` numbers the rules of an experiment
    whose cells run as several jobs (``split``)."""

    experiment: str
    field: str
    units: tuple[str, ...]
    part: int | None = None

    @property
    def rule(self) -> str:
        """Its rule's name."""
        part = "" if self.part is None else str(self.part)
        return f"train_{self.experiment}_cell{part}"

    def split(self, most: int = MAX_UNITS) -> list[Cells]:
        """These cells as rules of at most ``most`` units each."""
        if len(self.units) <= most:
            return [self]
        return [
            replace(self, units=self.units[start : start + most], part=part)
            for part, start in enumerate(range(0, len(self.units), most))
        ]

    def outputs(self, layout: Layout) -> dict[str, list[str]]:
        """The rule's outputs by role: one pattern per unit, records (and spectra)."""
        roles = {"records": layout.records_of(self.experiment)}
        if self.experiment == "spectrum":
            roles["spectra"] = layout.spectra_of(self.experiment)
        return {
            role: [self._of(pattern, unit) for unit in self.units]
            for role, pattern in roles.items()
        }

    def logs(self, layout: Layout) -> list[str]:
        """Each unit's log, where its job alone would write it: each holds the cell's (the
        aggregation reads a training job's log as the mark that it ran)."""
        return [layout.log(pattern) for pattern in self.outputs(layout)["records"]]

    def _of(self, pattern: str, value: str) -> str:
        return pattern.replace(f"{{{self.field}}}", value)
