"""Figure 5d: how the energy of Entacmaea's largest Fourier coefficients splits over degrees.

Reads the table of ``whcore entacmaea-energy`` (never raw data)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import COLUMN_WIDTH, plt

__all__ = ["energy_figure", "plot_energy_by_degree"]

_TOP_COLOR = "#7570b3"
_ALL_COLOR = "#bdbdbd"


def plot_energy_by_degree(table: pd.DataFrame):
    """Grouped bars: share of energy per degree among the top coefficients, and over the whole
    spectrum for comparison; the top bars carry their percentage and coefficient count."""
    shown = table[(table["top_count"] > 0) | (table["all_fraction"] > 0.005)]
    top = int(table["top_count"].sum())
    constant = (
        "constant term included"
        if table.loc[table["degree"] == 0, "top_count"].sum()
        else "constant term excluded"
    )
    x = np.arange(len(shown))
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.4))
    bars = ax.bar(
        x - 0.2,
        100 * shown["top_fraction"],
        width=0.4,
        color=_TOP_COLOR,
        label=f"top {top} coefficients",
    )
    ax.bar(
        x + 0.2, 100 * shown["all_fraction"], width=0.4, color=_ALL_COLOR, label="whole spectrum"
    )
    for bar, share, count in zip(bars, shown["top_fraction"], shown["top_count"]):
        if count:
            ax.annotate(
                f"{100 * share:.1f}%\n({count})",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=6,
            )
    ax.set_xticks(x, [str(d) for d in shown["degree"]])
    ax.set_xlabel("degree of the frequency (number of interacting mutations)")
    ax.set_ylabel("share of energy (%)")
    ax.set_ylim(0, 100 * max(shown["top_fraction"].max(), shown["all_fraction"].max()) * 1.25)
    ax.set_title(
        f"Entacmaea: energy of the {top} largest Fourier\n"
        f"coefficients by degree ({constant}; count in brackets)"
    )
    ax.legend(frameon=False, loc="upper right")
    return fig


def energy_figure(tables: dict, settings: dict | None = None):
    """The registry's entry point: draws Figure 5d from the ``entacmaea_energy`` table."""
    if "entacmaea_energy" not in tables and len(tables) != 1:
        raise ValueError(f"Figure 5d reads one entacmaea-energy table, got {sorted(tables)}")
    table = tables.get("entacmaea_energy", next(iter(tables.values())))
    missing = {"degree", "top_count", "top_fraction", "all_fraction"} - set(table.columns)
    if missing:
        raise ValueError(
            f"not an entacmaea-energy table (missing columns {sorted(missing)}). "
            "Fix: run `whcore entacmaea-energy` to make it"
        )
    return plot_energy_by_degree(table)
