"""Experiment 2 figures: generalization and runtime on high-dimensional sparse functions."""

from __future__ import annotations

from .style import (
    PAGE_WIDTH,
    curves_of,
    draw_label,
    legend_below,
    readable_log_axes,
    subplots,
)

__all__ = ["synthetic_r2", "synthetic_runtime"]


def synthetic_r2(tables: dict, settings: dict, appendix: bool = False):
    """Test R^2 vs c (train size = c * 25 n), one panel per n (and per draw in the appendix);
    mean and standard error over (data seed, training seed) pairs."""
    summary = tables["synthetic_summary"]
    ns = sorted(summary["n"].unique())
    draws = sorted(summary["draw"].unique()) if appendix else [settings["figure_draw"]]
    fig, axes = subplots(
        len(draws), len(ns), sharey=True, figsize=(PAGE_WIDTH, 1.9 * len(draws) + 0.6)
    )
    for r, draw in enumerate(draws):
        for c, n in enumerate(ns):
            ax = axes[r, c]
            part = summary[(summary["n"] == n) & (summary["draw"] == draw)]
            for curve in curves_of(part):
                line = part[part["variant"] == curve.variant].sort_values("c")
                ax.errorbar(
                    line["c"],
                    line["mean"],
                    yerr=line["sem"],
                    color=curve.color,
                    ls=curve.style,
                    label=curve.label,
                    marker="o",
                    ms=2.5,
                    lw=1,
                    capsize=2,
                )
            cs = sorted(part["c"].unique())  # ticks at the grid's c only: c is an integer
            ax.set_xticks(cs, [f"{c:g}" for c in cs])
            ax.set_title(f"n = {n}" + (f", {draw_label(draw)}" if appendix else ""))
            ax.set_xlabel("c (train size = c · 25n)" if r == len(draws) - 1 else "")
            ax.set_ylabel("test $R^2$" if c == 0 else "")
    legend_below(fig, axes[0, 0])
    return fig


def synthetic_runtime(tables: dict, settings: dict, appendix: bool = False):
    """(I) the best test R^2 reached by each epoch (running maximum, the paper's metric),
    (II) the same by wall-clock time, (III) early-stopped R^2 vs total training time per
    model. Appendix: every (n, c) of the first draw."""
    curves, selected = tables["synthetic_curves"], tables["synthetic_selected"]
    draw = settings["figure_draw"]
    curves, selected = curves[curves["draw"] == draw], selected[selected["draw"] == draw]
    if appendix:
        cells = sorted({(int(n), int(c)) for n, c in zip(curves["n"], curves["c"])})
    else:
        cells = [(settings["runtime_n"], settings["runtime_c"])]
    fig, axes = subplots(len(cells), 3, figsize=(PAGE_WIDTH, 1.9 * len(cells) + 0.6))
    for r, (n, c) in enumerate(cells):
        cell = curves[(curves["n"] == n) & (curves["c"] == c)]
        runs = selected[(selected["n"] == n) & (selected["c"] == c) & ~selected["diverged"]]
        if cell.empty:
            raise ValueError(
                f"no synthetic runs for n = {n}, c = {c} (draw {draw}); "
                "set synthetic.runtime_figure to a cell of the grid"
            )
        for curve in curves_of(cell):
            line = cell[cell["variant"] == curve.variant]
            style = dict(color=curve.color, ls=curve.style, label=curve.label, lw=1)
            axes[r, 0].plot(line["epoch"], line["max_test_r2"], **style)
            axes[r, 1].plot(line["cum_time"], line["max_test_r2"], **style)
            pts = runs[runs["variant"] == curve.variant]
            axes[r, 2].scatter(pts["train_time"], pts["test_r2"], s=6, color=curve.color)
        axes[r, 1].set_xscale("log")
        axes[r, 2].set_xscale("log")
        axes[r, 0].set_ylabel(f"test $R^2$\n(n = {n}, c = {c})")
        for ax, xlabel in zip(axes[r], ("epoch", "training time (s)", "training time (s)")):
            ax.set_xlabel(xlabel if r == len(cells) - 1 else "")
    for ax, title in zip(
        axes[0],
        (
            "(I) best test $R^2$ so far,\nby epoch",
            "(II) best test $R^2$ so far,\nby training time",
            "(III) early-stopped $R^2$\nvs training time",
        ),
    ):
        ax.set_title(title)
    legend_below(fig, axes[0, 0])
    readable_log_axes(fig)
    return fig
