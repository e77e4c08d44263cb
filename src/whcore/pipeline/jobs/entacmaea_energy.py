"""The entacmaea-energy job: Entacmaea's exact spectrum, the energy per degree of its top
coefficients (Figure 5d)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec, optional

__all__ = ["EntacmaeaEnergySpec"]


@dataclass(frozen=True)
class EntacmaeaEnergySpec(JobSpec):
    """Entacmaea's exact spectrum: energy per degree of its top coefficients (Figure 5d)."""

    KIND, SUBCOMMAND, OUTPUTS = "entacmaea_energy", "entacmaea-energy", ("table",)
    OPTIONAL_OUTPUTS = ("coefficients",)
    HELP = (
        "exact WHT of Entacmaea: energy per degree of the top coefficients (spec fields: "
        "data, top, include_constant; outputs: table, optional coefficients)"
    )
    FINAL = True

    data: str
    outputs: dict
    top: int = 100
    include_constant: bool = optional(False)

    def inputs(self) -> tuple[str, ...]:
        return (self.data,)

    def run(self, args, outputs) -> None:
        from ..analyses.entacmaea_energy import energy_tables

        table, best, meta = energy_tables(self.data, self.top, self.include_constant)
        if "coefficients" in self.outputs:
            outputs.table("coefficients", best, **meta)
        out = outputs.table("table", table, **meta)
        shares = ", ".join(
            f"{d}: {f:.1%}" for d, f in zip(table["degree"], table["top_fraction"]) if f
        )
        print(f"wrote {out}: top-{self.top} energy by degree {shares}")


Spec = EntacmaeaEnergySpec
