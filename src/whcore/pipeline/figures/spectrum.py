"""Experiment 1 figures: how the network's Fourier spectrum evolves during training.

Curves average over every selected run (draws x data seeds x training seeds; Figure 3: the
median, each run's SAE faint behind it); runs that stopped early keep their final values (a
stopped network no longer changes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm

from ..aggregation import forward_fill_epochs
from .style import (
    PAGE_WIDTH,
    NothingToShow,
    curves_of,
    degrees,
    draw_label,
    heatmap_grid_width,
    legend_below,
    panel_title,
    plt,
    readable_log_axes,
    subplots,
)

__all__ = ["degree_sae_energy", "sae_evolution", "spectrum_evolution", "support_evolution"]

RUN_KEYS = ["dataset", "variant", "train_size", "data_seed", "seed"]


# Figure 3 draws at most this many runs per curve and train size (evenly spaced over the
# runs in order of draw, data seed and seed), so that the median stays readable over the
# paper's 125 runs.
MAX_RUN_LINES = 25


def _mean_curves(
    epochs: pd.DataFrame, columns: list[str], how: str = "mean", filled=None
) -> pd.DataFrame:
    """Mean (or ``how``) per (curve, train size, epoch); the curve's typed method and b columns
    kept. ``filled``: the runs already forward-filled."""
    if filled is None:
        filled = forward_fill_epochs(epochs, RUN_KEYS, columns)
    typed = epochs[["variant", "method", "b"]].drop_duplicates("variant")
    grouped = filled.groupby(["variant", "train_size", "epoch"])[columns]
    return grouped.agg(how).reset_index().merge(typed, on="variant")


def _sizes(epochs, settings, appendix: bool) -> list[int]:
    main = settings["figure_train_size"]
    sizes = sorted(int(s) for s in epochs["train_size"].unique())
    if main not in sizes:
        raise ValueError(
            f"no spectrum runs at figure_train_size = {main} (train sizes {sizes}); "
            "set spectrum.figure_train_size to one of spectrum.train_sizes"
        )
    others = [s for s in sizes if s != main]
    if appendix and not others:
        raise NothingToShow(
            "This configuration has no train sizes besides the main one "
            "(spectrum.train_sizes), so this appendix figure is empty."
        )
    return others if appendix else [main]


def support_evolution(tables: dict, settings: dict, appendix: bool = False):
    """Heatmaps (degree x epoch) of the learned amplitude of each target frequency."""
    epochs = tables["spectrum_epochs"]
    amp_cols = sorted(c for c in epochs.columns if c.startswith("amp_deg"))
    sizes = _sizes(epochs, settings, appendix)
    curves = _mean_curves(epochs[epochs["train_size"].isin(sizes)], amp_cols)
    lines = curves_of(curves)
    width = heatmap_grid_width(len(lines))
    fig, axes = subplots(
        len(sizes), len(lines), sharey=True, figsize=(width, 1.3 * len(sizes) + 0.8)
    )
    for row, size in enumerate(sizes):
        for col, line in enumerate(lines):
            ax = axes[row, col]
            part = curves[(curves["variant"] == line.variant) & (curves["train_size"] == size)]
            image = ax.imshow(
                part[amp_cols].to_numpy().T,
                aspect="auto",
                origin="lower",
                cmap="viridis",
                vmin=0,
                vmax=1,
                interpolation="nearest",
                extent=(-0.5, part["epoch"].max() + 0.5, 0.5, len(amp_cols) + 0.5),
            )
            ax.set_title(panel_title(line.label, len(lines), width) if row == 0 else "")
            ax.set_xlabel("epoch" if row == len(sizes) - 1 else "")
            ax.set_yticks(range(1, len(amp_cols) + 1))
            ax.grid(False)
        axes[row, 0].set_ylabel(f"degree\n(train size {size})")
    fig.colorbar(image, ax=axes, shrink=0.8, label="learned amplitude (target: 1)")
    fig.suptitle("Learned amplitude of each target frequency during training", fontsize=9)
    return fig


def spectrum_evolution(tables: dict, settings: dict, appendix: bool = False):
    """Whole spectrum (frequencies ordered by degree) per epoch, target beneath, per variant.
    Colors are |coefficient| on a log scale so that small erroneous coefficients show."""
    heat = tables["spectrum_heatmap"]
    f_cols = [c for c in heat.columns if c.startswith("f") and c[1:].isdigit()]
    n = int(np.log2(len(f_cols)))
    order = np.argsort(degrees(n), kind="stable")
    draws = sorted(heat["dataset"].unique())
    main = f"draw{settings['figure_draw']}"
    draws = [d for d in draws if d != main] if appendix else [main]
    if not draws:
        raise NothingToShow(
            "This configuration has a single target draw (spectrum.draws), "
            "so this appendix figure is empty."
        )
    lines = curves_of(heat[heat["variant"] != "target"])
    width = heatmap_grid_width(len(lines))
    fig, axes = subplots(len(draws), len(lines), figsize=(width, 1.8 * len(draws) + 1.0))
    norm = LogNorm(1e-3, 1, clip=True)
    edges = np.cumsum(np.bincount(degrees(n)))[:-1]
    for row, draw in enumerate(draws):
        target = heat[(heat["dataset"] == draw) & (heat["variant"] == "target")]
        target = np.abs(target[f_cols].to_numpy()[:, order])
        for col, line in enumerate(lines):
            ax = axes[row, col]
            part = heat[(heat["dataset"] == draw) & (heat["variant"] == line.variant)]
            values = np.abs(part.sort_values("epoch")[f_cols].to_numpy()[:, order])
            strip = max(2, len(values) // 8)
            gap = np.full((max(1, strip // 2), values.shape[1]), np.nan)
            image = np.vstack([values, gap, np.repeat(target, strip, 0)])
            ax.imshow(
                np.maximum(image, 1e-3),
                aspect="auto",
                cmap="magma",
                norm=norm,
                interpolation="nearest",
            )
            for edge in edges:
                ax.axvline(edge - 0.5, color="white", lw=0.3)
            # Single target columns vanish when 2^n columns are downsampled: mark them.
            marks = np.flatnonzero(target[0] > 0)
            ax.plot(
                marks,
                np.full(len(marks), len(image) - strip / 2),
                "v",
                color="cyan",
                ms=3,
                ls="none",
            )
            ax.set_title(panel_title(line.label, len(lines), width) if row == 0 else "")
            ax.set_xticks([])
            ax.set_yticks([0, len(values) - 1])
            ax.grid(False)
        axes[row, 0].set_ylabel(f"epoch\n(target $g^*$, {draw_label(draw)})")
    fig.supxlabel(
        "frequencies ordered by degree (white lines separate degrees); "
        "target spectrum in the strip below",
        fontsize=8,
    )
    fig.colorbar(
        plt.cm.ScalarMappable(cmap="magma", norm=norm), ax=axes, shrink=0.8, label="|coefficient|"
    )
    runs = heat.loc[heat["variant"] != "target", "runs"]
    fig.suptitle(
        "Evolution of the whole Fourier spectrum during training "
        f"(train size {settings['figure_train_size']}; mean |coefficient| over "
        f"{int(runs.min())}{'' if runs.min() == runs.max() else f'-{int(runs.max())}'} runs)",
        fontsize=9,
    )
    return fig


def _plot_curve(ax, curves, line, size, column, **style) -> None:
    """One method's summary curve of ``column`` at one train size."""
    part = curves[(curves["variant"] == line.variant) & (curves["train_size"] == size)]
    ax.plot(part["epoch"], part[column], color=line.color, ls=line.style, label=line.label, **style)


def _line_panels(curves, sizes, panels, ylabel_of, title_of):
    lines = curves_of(curves)
    fig, axes = subplots(
        len(sizes), len(panels), sharex=True, figsize=(PAGE_WIDTH, 1.9 * len(sizes) + 0.4)
    )
    for row, size in enumerate(sizes):
        for col, column in enumerate(panels):
            ax = axes[row, col]
            for line in lines:
                _plot_curve(ax, curves, line, size, column, lw=1)
            ax.set_yscale("log")
            ax.set_title(title_of(column, size) if row == 0 else "")
            ax.set_ylabel(ylabel_of(column, size) if col == 0 else "")
            ax.set_xlabel("epoch" if row == len(sizes) - 1 else "")
    legend_below(fig, axes[0, 0])
    readable_log_axes(fig)
    return fig


def sae_evolution(tables: dict, settings: dict, appendix: bool = False):
    """SAE on the target support and on the whole spectrum vs epoch."""
    epochs = tables["spectrum_epochs"]
    sizes = _sizes(epochs, settings, appendix)
    cols = ["sae_support", "sae_full"]
    curves = _mean_curves(epochs[epochs["train_size"].isin(sizes)], cols)
    titles = {"sae_support": "SAE on the target support", "sae_full": "SAE on the whole spectrum"}
    fig = _line_panels(
        curves, sizes, cols, lambda c, s: f"SAE (train size {s})", lambda c, s: titles[c]
    )
    return fig


def _run_lines(filled: pd.DataFrame, limit: int = MAX_RUN_LINES) -> list[pd.DataFrame]:
    """The runs of one curve and train size (forward-filled), at most ``limit`` of them,
    evenly spaced over the runs in order of (draw, data seed, seed)."""
    runs = [run for _, run in filled.groupby(RUN_KEYS, sort=True)]
    if len(runs) > limit:
        runs = [runs[i] for i in np.linspace(0, len(runs) - 1, limit).round().astype(int)]
    return runs


def degree_sae_energy(tables: dict, settings: dict, appendix: bool = False):
    """Per degree: SAE and energy of the network's spectrum vs epoch; the median over runs,
    and behind it each run's SAE, faint (a mean over runs smooths away the standard network's
    SAE falling, then rising again, at a different epoch in each run)."""
    epochs = tables["spectrum_epochs"]
    sizes = _sizes(epochs, settings, appendix)
    degs = sorted(int(c[7:]) for c in epochs.columns if c.startswith("sae_deg"))
    cols = [f"sae_deg{d}" for d in degs] + [f"energy_deg{d}" for d in degs]
    chosen = epochs[epochs["train_size"].isin(sizes)]
    filled = forward_fill_epochs(chosen, RUN_KEYS, cols)
    curves = _mean_curves(chosen, cols, how="median", filled=filled)
    rows = [(s, kind) for s in sizes for kind in ("sae", "energy")]
    lines = curves_of(curves)
    fig, axes = subplots(
        len(rows), len(degs), sharex=True, figsize=(PAGE_WIDTH, 1.6 * len(rows) + 0.7)
    )
    shown = []
    for r, (size, kind) in enumerate(rows):
        for c, d in enumerate(degs):
            ax = axes[r, c]
            column = f"{kind}_deg{d}"
            for line in lines:
                if kind == "sae":  # each run, faint, behind the medians
                    mine = filled[
                        (filled["variant"] == line.variant) & (filled["train_size"] == size)
                    ]
                    runs = _run_lines(mine)
                    shown.append((len(runs), mine[RUN_KEYS].drop_duplicates().shape[0]))
                    for run in runs:
                        ax.plot(
                            run["epoch"], run[column], color=line.color, lw=0.4, alpha=0.3, zorder=1
                        )
                _plot_curve(ax, curves, line, size, column, lw=1.3, zorder=3)
            ax.set_yscale("log")
            ax.set_title(f"degree {d}" if r == 0 else "")
            ax.set_ylabel(
                f"{'SAE' if kind == 'sae' else 'energy'}\n(size {size})" if c == 0 else ""
            )
            ax.set_xlabel("epoch" if r == len(rows) - 1 else "")
    legend_below(fig, axes[0, 0])
    drawn, total = min(n for n, _ in shown), max(n for _, n in shown)
    faint = f"{drawn} runs" if drawn == total else f"{drawn} of {total} runs"
    fig.suptitle(
        "Spectral approximation error and energy per degree during training\n"
        f"(bold: median over runs; faint: the SAE of each of {faint} per curve)",
        fontsize=9,
    )
    readable_log_axes(fig)
    return fig
