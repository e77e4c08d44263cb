"""Experiment 3 figures: the four real datasets, networks against baselines."""

from __future__ import annotations

from ...data.datasets import REGISTRY
from ..analyses.families import BASELINES as FAMILY_REGISTRY
from .style import (
    PAGE_WIDTH,
    curves_of,
    dataset_title,
    legend_below,
    readable_log_axes,
    subplots,
)

__all__ = ["real_r2", "real_runtime"]

BASELINES = tuple(FAMILY_REGISTRY)


def _panel(ax, summary, value, err=None, log=False):
    for curve in curves_of(summary):
        line = summary[summary["variant"] == curve.variant].sort_values("train_size")
        baseline = curve.variant in BASELINES
        style = dict(
            color=curve.color,
            label=curve.label,
            lw=1,
            marker="s" if baseline else "o",
            ms=2.5,
            ls="--" if baseline else curve.style,
        )
        if err:
            ax.errorbar(line["train_size"], line[value], yerr=line[err], capsize=2, **style)
        else:
            ax.plot(line["train_size"], line[value], **style)
    if log:
        ax.set_yscale("log")


def real_r2(tables: dict, settings: dict, with_times: bool = False):
    """Test R^2 vs train size per dataset (mean, one standard deviation); optionally a second
    row with mean training times on a log axis."""
    summary = tables["real_summary"]
    present = set(summary["dataset"])
    datasets = [d for d in REGISTRY if d in present] + sorted(present - set(REGISTRY))
    rows = 2 if with_times else 1
    fig, axes = subplots(rows, len(datasets), figsize=(PAGE_WIDTH, 2.0 * rows + 0.6))
    for c, name in enumerate(datasets):
        part = summary[summary["dataset"] == name]
        _panel(axes[0, c], part, "mean", err="std")
        axes[0, c].set_title(dataset_title(name))
        axes[0, c].set_ylabel("test $R^2$" if c == 0 else "")
        if with_times:
            _panel(axes[1, c], part, "train_time", log=True)
            axes[1, c].set_ylabel("training time (s)" if c == 0 else "")
        axes[-1, c].set_xlabel("train size")
    legend_below(fig, axes[0, 0])
    readable_log_axes(fig)
    return fig


def real_runtime(tables: dict, settings: dict):
    """Mean training time of the selected model per method on real.runtime_dataset (GB1 in the
    paper), which the title names."""
    summary = tables["real_summary"]
    name = settings["runtime_dataset"]
    part = summary[summary["dataset"] == name]
    if part.empty:
        raise ValueError(f"no real-data runs for {name!r}; set real.runtime_dataset")
    fig, axes = subplots(figsize=(PAGE_WIDTH / 2, 2.4))
    ax = axes[0, 0]
    _panel(ax, part, "train_time", log=True)
    ax.set_xlabel("train size")
    ax.set_ylabel("training time (s)")
    ax.set_title(f"Training time per model on {dataset_title(name)}")
    ax.legend(ncol=2)
    readable_log_axes(fig)
    return fig
