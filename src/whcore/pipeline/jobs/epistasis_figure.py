"""The epistasis-figure job: a dataset's learned epistasis drawn (energy by number of sites,
site-by-site pairwise heatmap)."""

from __future__ import annotations

from dataclasses import dataclass

from .figure import read_tables
from .spec import JobSpec

__all__ = ["EpistasisFigureSpec"]


@dataclass(frozen=True)
class EpistasisFigureSpec(JobSpec):
    """The figure of a dataset's learned epistasis: energy by number of sites, site-by-site
    pairwise heatmap."""

    KIND, SUBCOMMAND, OUTPUTS = "epistasis_figure", "epistasis-figure", ("stem",)
    HELP = "draw the epistasis figure (energy by number of sites, site-by-site heatmap)"
    TABLES = "its three epistasis tables"
    FIGURE, FINAL = True, True

    dataset: str
    title: str
    outputs: dict
    run_name: str | None = None  # labels a run other than the paper's, as every figure

    def run(self, args, outputs) -> None:
        from ..figures.epistasis import epistasis_figure
        from ..runtime.provenance import provenance

        fig = epistasis_figure(read_tables(args.tables), self.to_dict())
        for path in outputs.figure(fig, provenance()):
            print(f"wrote {path}")


Spec = EpistasisFigureSpec
