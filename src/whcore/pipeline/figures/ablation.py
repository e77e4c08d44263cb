"""Figure 5c: test R^2 of a random forest's pruned exact spectrum, by degree vs by amplitude.

Reads the tables of ``whcore ablation`` (never raw data): one panel per dataset, test R^2
against the number of coefficients kept, one line per deletion order: the mean over the
forests (one per seed, each on its own split), their range shaded.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import EngFormatter

from .style import COLUMN_WIDTH, PAGE_WIDTH, dataset_title, legend_below, subplots

__all__ = ["ablation_figure", "plot_ablation"]

_ORDERS = {
    "amplitude": ("smallest amplitude removed first", "#7570b3", "o"),
    "degree": ("highest degree removed first", "#d95f02", "s"),
}
_COLUMNS = {"dataset", "order", "step", "kept", "test_r2", "n_coefficients", "forest_test_r2"}
_FOREST = ["seed"]  # one forest (and split) per seed


def plot_ablation(table: pd.DataFrame):
    """One panel per dataset of an ablation table (several tables concatenated)."""
    datasets = list(dict.fromkeys(table["dataset"]))
    width = COLUMN_WIDTH if len(datasets) == 1 else min(PAGE_WIDTH, 2.6 * len(datasets))
    fig, axes = subplots(1, len(datasets), figsize=(width, 2.3))
    for ax, dataset in zip(axes[0], datasets):
        rows = table[table["dataset"] == dataset]
        for order, (label, color, marker) in _ORDERS.items():
            # One line per order: the mean over the forests (seeds), their range shaded.
            line = (
                rows[rows["order"] == order]
                .groupby("step")
                .agg(
                    kept=("kept", "mean"),
                    mean=("test_r2", "mean"),
                    low=("test_r2", "min"),
                    high=("test_r2", "max"),
                )
                .sort_values("kept")
            )
            ax.fill_between(
                line["kept"], line["low"], line["high"], color=color, alpha=0.2, linewidth=0
            )
            ax.plot(
                line["kept"],
                line["mean"],
                color=color,
                marker=marker,
                markersize=3,
                linewidth=1.2,
                label=label,
            )
        ax.axhline(
            rows.drop_duplicates(_FOREST)["forest_test_r2"].mean(),
            color="#4d4d4d",
            linestyle=":",
            linewidth=0.8,
            label="forest (all coefficients)",
        )
        ax.invert_xaxis()  # pruning proceeds to the right
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_xlabel("Fourier coefficients kept")
        forests = rows.drop_duplicates(_FOREST)
        size = f"K = {int(forests['n_coefficients'].mean()):,}"
        if len(forests) > 1:
            size = f"{len(forests)} forests, mean {size}"
        ax.set_title(f"{dataset_title(dataset)}: {size}")
    axes[0][0].set_ylabel("test $R^2$")
    # Below the panels: inside one, the legend would hide the curves where pruning bites.
    legend_below(fig, axes[0][0], max_columns=1 if len(datasets) == 1 else 2)
    return fig


def _check(table: pd.DataFrame, name: str) -> pd.DataFrame:
    missing = _COLUMNS - set(table.columns)
    if missing:
        raise ValueError(
            f"{name}: not an ablation table (missing columns {sorted(missing)}). "
            "Fix: make it with `whcore ablation`"
        )
    return table


def ablation_figure(tables: dict, settings: dict | None = None):
    """The registry's entry point: ``tables`` maps table names to ablation tables."""
    frames = [_check(frame, name) for name, frame in tables.items()]
    if not frames:
        raise ValueError("figure fig5c_ablation needs at least one ablation table")
    return plot_ablation(pd.concat(frames, ignore_index=True))
