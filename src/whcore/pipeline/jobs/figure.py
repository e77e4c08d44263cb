"""The figure job: one paper figure (PDF and PNG) from its tables."""

from __future__ import annotations

from dataclasses import dataclass, field

from .spec import JobSpec

__all__ = ["FigureSpec", "read_tables"]


def read_tables(paths) -> dict:
    """Parquet tables by name (their file's stem)."""
    from pathlib import Path

    import pandas as pd

    return {Path(path).stem: pd.read_parquet(path) for path in paths}


@dataclass(frozen=True)
class FigureSpec(JobSpec):
    """One figure (PDF and PNG) from its tables (``whcore.pipeline.figures.registry``)."""

    KIND, SUBCOMMAND, OUTPUTS = "figure", "figure", ("stem",)
    HELP = "draw one figure (PDF and PNG) from its tables"
    TABLES = "the tables it reads (Parquet)"
    FIGURE, FINAL = True, True

    figure: str
    outputs: dict
    settings: dict = field(default_factory=dict)

    def run(self, args, outputs) -> None:
        from ..figures.registry import draw_figure
        from ..runtime.provenance import provenance

        fig = draw_figure(self.figure, read_tables(args.tables), self.settings)
        for path in outputs.figure(fig, provenance()):
            print(f"wrote {path}")


Spec = FigureSpec
