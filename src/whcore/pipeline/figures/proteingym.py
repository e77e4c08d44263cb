"""ProteinGym's supervised protocol in its leaderboard's layout: per dataset, the methods (rows,
best average first) by split scheme (random, modulo, contiguous), each bar the mean Spearman
correlation on the held-out folds with its standard error over the folds. Reads the tables of
the protocol's aggregation (``proteingym_<dataset>``)."""

from __future__ import annotations

import numpy as np

from ...data.folds import SCHEMES
from ..analyses.proteingym import SCHEME_LABELS, protocol_summary
from .style import PAGE_WIDTH, dataset_title, legend_below, method_label, subplots

__all__ = ["proteingym_spearman"]

SCHEME_COLORS = {
    "fold_random_5": "#4c72b0",
    "fold_modulo_5": "#dd8452",
    "fold_contiguous_5": "#55a868",
}


def proteingym_spearman(tables: dict, settings: dict):
    """Mean Spearman (with its standard error over the folds) per method and split scheme, one
    panel per dataset."""
    summary = protocol_summary(tables)
    datasets = sorted(summary["dataset"].unique())
    methods_most = summary["method"].nunique()
    fig, axes = subplots(
        1, len(datasets), figsize=(PAGE_WIDTH, 0.9 + 0.32 * methods_most * 1.4), sharex=True
    )
    schemes = [s for s in SCHEMES if s in set(summary["scheme"])]
    height = 0.8 / len(schemes)
    for ax, name in zip(axes[0], datasets):
        part = summary[summary["dataset"] == name]
        order = (
            part.groupby("method")["spearman_mean"].mean().sort_values(ascending=True).index
        )  # best at the top
        rows = {method: k for k, method in enumerate(order)}
        for s, scheme in enumerate(schemes):
            bars = part[part["scheme"] == scheme].set_index("method").reindex(order)
            offset = (s - (len(schemes) - 1) / 2) * height
            ax.barh(
                np.arange(len(order)) - offset,
                bars["spearman_mean"],
                height=height,
                xerr=bars["spearman_se"].fillna(0),
                color=SCHEME_COLORS[scheme],
                label=SCHEME_LABELS[scheme],
                error_kw={"elinewidth": 0.8, "capsize": 1.5},
            )
        ax.set_yticks(list(rows.values()), [method_label(m) for m in rows])
        ax.axvline(0, color="0.3", lw=0.6)
        ax.set_xlabel("Spearman (mean over folds, s.e.)")
        ax.set_title(dataset_title(name))
    legend_below(fig, axes[0, 0])
    return fig
