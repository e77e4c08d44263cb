"""The epistasis job: the spectra of the selected standard and HashWH networks of a dataset
(top interactions, energy by number of sites and by site set)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import DataSplit, JobSpec

__all__ = ["EpistasisSpec"]


@dataclass(frozen=True)
class EpistasisSpec(JobSpec):
    """The spectra of the selected standard and HashWH networks of a dataset."""

    KIND, SUBCOMMAND, OUTPUTS = "epistasis", "epistasis", ("interactions", "energy", "sites")
    HELP = (
        "spectra of the selected standard and HashWH networks: top interactions, energy by "
        "number of sites and by site set (outputs: interactions, energy, sites)"
    )
    FINAL, DEVICE = True, True

    dataset: str
    data: DataSplit
    methods: list
    training: dict
    top: int
    spright: dict
    outputs: dict

    def command_inputs(self, inputs, plan) -> dict[str, list[str]]:
        return {"--selected": [inputs[1]]}

    @classmethod
    def add_arguments(cls, parser) -> None:
        parser.add_argument("--selected", required=True, help="the real_selected table")

    def run(self, args, outputs) -> None:
        import pandas as pd

        from ..analyses.epistasis import learned_epistasis
        from ..runtime.provenance import provenance

        top, energy, site_sets, basis = learned_epistasis(
            self.data,
            pd.read_parquet(args.selected),
            dataset=self.dataset,
            methods=self.methods,
            training=self.training,
            spright=self.spright,
            top=self.top,
            device=args.device,
            log=lambda m: print(m, flush=True),
        )
        meta = {"provenance": provenance(args.device), "basis": basis}
        outputs.table("energy", energy, **meta)
        outputs.table("sites", site_sets, **meta)
        outputs.table("interactions", top, **meta)
        print(f"basis: {basis}")
        for method, rows in site_sets.groupby("method", sort=False):
            print(f"{method}: site sets " + "; ".join(f"{{{s}}}" for s in rows["sites"].head(5)))


Spec = EpistasisSpec
