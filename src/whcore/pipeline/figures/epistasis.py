"""The epistasis the selected networks learned: energy of their Walsh-Hadamard spectrum by
degree, the standard and HashWH networks side by side (as Figure 5d does for Entacmaea's
measured landscape). Reads the tables of ``whcore epistasis`` (never a network)."""

from __future__ import annotations

import numpy as np

from .style import COLUMN_WIDTH, method_color, method_label, plt

__all__ = ["epistasis_figure"]


def epistasis_figure(tables: dict, spec: dict):
    """Grouped bars: each method's share of spectral energy per degree (constant left out)."""
    energy = next(table for name, table in tables.items() if name.startswith("epistasis_energy"))
    missing = {"degree", "fraction", "method", "spectrum"} - set(energy.columns)
    if missing:
        raise ValueError(
            f"not an epistasis energy table (missing columns {sorted(missing)}). "
            "Fix: run `whcore epistasis` to make it"
        )
    shown = energy.groupby("degree")["fraction"].max()
    degrees = shown[shown > 0.005].index.to_numpy() if (shown > 0.005).any() else shown.index
    methods = list(dict.fromkeys(energy["method"]))
    width = 0.8 / len(methods)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, 2.4))
    x = np.arange(len(degrees))
    for k, method in enumerate(methods):
        rows = energy[energy["method"] == method].set_index("degree")["fraction"]
        ax.bar(
            x + (k - (len(methods) - 1) / 2) * width,
            100 * rows.reindex(degrees, fill_value=0.0).to_numpy(),
            width=width,
            color=method_color(method),
            label=f"{method_label(method)} ({energy.loc[energy['method'] == method, 'spectrum'].iloc[0]})",
        )
    ax.set_xticks(x, [str(d) for d in degrees])
    ax.set_xlabel("degree of the interaction (number of features)")
    ax.set_ylabel("share of energy (%)")
    ax.set_title(f"{spec.get('title', spec['dataset'])}: learned epistasis by degree")
    ax.legend(frameon=False, loc="upper right", fontsize=6)
    return fig
