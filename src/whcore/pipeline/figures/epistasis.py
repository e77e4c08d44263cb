"""The epistasis the selected networks learned, in sites: the share of their spectral energy by
number of sites (between-site terms; the within-site contrasts of one-hot features are left out
and their share is given in the legend) and the site-by-site heatmap of the pairwise
interaction energy, the standard and HashWH networks side by side. The basis of the spectrum is
printed under the title. Shares hide magnitude: a network whose spectrum holds almost no energy
(its predictions nearly constant over the cube) draws a heatmap as full as one that holds much,
so each method's total energy is in the legend and on its heatmap, and a heatmap of a method with
less than ``LOW_ENERGY`` of the largest method's energy says so on the panel. A run other than the
paper's is labelled as every figure is (``style.mark_run``). Reads the tables of ``whcore
epistasis`` (never a network)."""

from __future__ import annotations

import re
import textwrap

import numpy as np

from .style import PAGE_WIDTH, legend_below, mark_run, method_color, method_label, subplots

__all__ = ["epistasis_figure", "pair_matrix"]

MAX_SITES = 25  # the heatmap's sites: those of the largest pairwise energies
LOW_ENERGY = 0.05  # a method below this share of the largest method's energy: said on its panel


def _table(tables: dict, prefix: str, needed: set):
    for name, table in tables.items():
        if re.fullmatch(rf"{prefix}_[a-z0-9_]+", name) and needed <= set(table.columns):
            return table
    raise ValueError(
        f"no {prefix} table with columns {sorted(needed)} among {sorted(tables)}. "
        "Fix: run `whcore epistasis` to make it"
    )


def _site_key(label: str):
    return (0, int(label)) if label.isdigit() else (1, label)


def pair_matrix(site_sets, max_sites: int = MAX_SITES):
    """(sites, matrix): the share of energy of every pair of sites (symmetric, NaN on the
    diagonal), over the ``max_sites`` sites with the largest pairwise energy, in site order."""
    pairs = site_sets[site_sets["degree"] == 2]
    split = [tuple(s.split(",")) for s in pairs["sites"]]
    weight: dict[str, float] = {}
    for (a, b), share in zip(split, pairs["fraction"]):
        weight[a] = weight.get(a, 0.0) + share
        weight[b] = weight.get(b, 0.0) + share
    if not weight:  # no pair: the sites of the main effects
        for label in site_sets.loc[site_sets["degree"] == 1, "sites"]:
            weight.setdefault(label, 0.0)
    kept = sorted(weight, key=lambda s: -weight[s])[:max_sites]
    sites = sorted(kept, key=_site_key)
    index = {s: k for k, s in enumerate(sites)}
    matrix = np.zeros((len(sites), len(sites)))
    for (a, b), share in zip(split, pairs["fraction"]):
        if a in index and b in index:
            matrix[index[a], index[b]] = matrix[index[b], index[a]] = share
    np.fill_diagonal(matrix, np.nan)
    return sites, matrix


def epistasis_figure(tables: dict, spec: dict):
    """Bars of each method's energy share by number of sites, then one pairwise heatmap per
    method; the legend below the panels, the basis under the title."""
    energy = _table(tables, "epistasis_energy", {"degree", "fraction", "method", "spectrum"})
    site_sets = _table(tables, "epistasis_sites", {"sites", "degree", "fraction", "method"})
    if "kind" not in energy:
        energy = energy.assign(kind="between sites")
    between = energy[energy["kind"] == "between sites"]
    shown = between.groupby("degree")["fraction"].max()
    degrees = shown[shown > 0.005].index.to_numpy() if (shown > 0.005).any() else shown.index
    methods = list(dict.fromkeys(energy["method"]))
    # all energy but the constant, within-site contrasts included: what the shares divide
    totals = energy.groupby("method")["energy"].sum() if "energy" in energy else None
    width = 0.8 / len(methods)
    fig, axes = subplots(
        1,
        1 + len(methods),
        figsize=(PAGE_WIDTH, 2.8),
        width_ratios=[1.2] + [1.0] * len(methods),
    )
    ax = axes[0, 0]
    x = np.arange(len(degrees))
    for k, method in enumerate(methods):
        mine = energy[energy["method"] == method]
        rows = mine[mine["kind"] == "between sites"].set_index("degree")["fraction"]
        within = mine.loc[mine["kind"] != "between sites", "fraction"].sum()
        label = f"{method_label(method)} ({mine['spectrum'].iloc[0]})"
        if totals is not None:
            label += f", energy {totals[method]:.3g}"
        if within > 0:
            label += f"; {100 * within:.0f}% within sites, not shown"
        ax.bar(
            x + (k - (len(methods) - 1) / 2) * width,
            100 * rows.reindex(degrees, fill_value=0.0).to_numpy(),
            width=width,
            color=method_color(method),
            label=label,
        )
    ax.set_xticks(x, [str(d) for d in degrees])
    ax.set_xlabel("number of sites")
    ax.set_ylabel("share of energy (%)")
    ax.set_title("energy by number of sites", fontsize=8)
    image = None
    for k, method in enumerate(methods):
        heat = axes[0, 1 + k]
        sites, matrix = pair_matrix(site_sets[site_sets["method"] == method])
        image = heat.imshow(100 * matrix, cmap="viridis", vmin=0, aspect="equal")
        ticks = np.arange(len(sites))
        size = 6 if len(sites) <= 12 else 4
        heat.set_xticks(ticks, sites, rotation=90, fontsize=size)
        heat.set_yticks(ticks, sites, fontsize=size)
        heat.set_title(f"{method_label(method)}: site pairs", fontsize=8)
        heat.set_xlabel("site")
        heat.grid(False)
        if totals is not None:
            _say_energy(heat, totals, method)
    if image is not None:
        fig.colorbar(image, ax=axes[0, 1:].tolist(), label="share of energy (%)", shrink=0.8)
    legend_below(fig, ax, max_columns=2)
    basis = str(energy["basis"].iloc[0]) if "basis" in energy else "Walsh-Hadamard"
    title = f"{spec.get('title', spec['dataset'])}: learned epistasis in sites"
    fig.suptitle(title + "\n" + textwrap.fill(f"basis: {basis}", 140), fontsize=7)
    mark_run(fig, spec.get("run_name"))
    return fig


def _say_energy(ax, totals, method: str) -> None:
    """The method's total energy under its heatmap; where it is below ``LOW_ENERGY`` of the
    largest method's, that the shares above are of almost nothing."""
    largest = totals.idxmax()
    text = f"total energy {totals[method]:.3g}"
    if totals[method] < LOW_ENERGY * totals[largest]:
        ratio = totals[method] / totals[largest] if totals[largest] > 0 else 0.0
        text += (
            f" = {100 * ratio:.1f}% of {method_label(largest)}'s:\nthis network carries "
            "almost no energy; the shares are of almost nothing"
        )
    ax.text(0.5, 1.12, text, transform=ax.transAxes, ha="center", va="bottom", fontsize=6)
