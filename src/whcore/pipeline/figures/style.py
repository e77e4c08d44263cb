"""The shared look of every figure and the one way figures are saved (PDF + PNG, atomically)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import NamedTuple

import matplotlib
import numpy as np

matplotlib.use("Agg")  # files only; never needs a display

import matplotlib.pyplot as plt
import seaborn as sns

from ...core.io import atomic_path
from ...core.methods import METHOD_INFO
from ...data.datasets import REGISTRY
from ..analyses.families import BASELINES, METHOD_LABELS
from ..runtime.marks import figure_creator

__all__ = [
    "COLUMN_WIDTH",
    "PAGE_WIDTH",
    "Curve",
    "apply_style",
    "curves_of",
    "dataset_title",
    "degrees",
    "draw_label",
    "heatmap_grid_width",
    "legend_below",
    "mark_run",
    "method_color",
    "method_label",
    "panel_title",
    "plt",
    "readable_log_axes",
    "save_figure",
    "subplots",
    "note_figure",
    "NothingToShow",
]

# Paper sizes: a single column is about 3.3 in wide, a full page about 6.8 in.
COLUMN_WIDTH = 3.3
PAGE_WIDTH = 6.8

# Colours come from the method and baseline registries (one list of methods), as the labels do.
_PALETTE = {name: info.color for name, info in METHOD_INFO.items()} | {
    name: info.color for name, info in BASELINES.items()
}


def dataset_title(name: str) -> str:
    """The short name a figure prints for a dataset (from the dataset registry)."""
    return REGISTRY[name].short if name in REGISTRY else name


def apply_style() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.0)
    plt.rcParams.update(
        {
            "figure.dpi": 150,
            "savefig.dpi": 200,
            "savefig.bbox": "tight",
            "axes.titlesize": 9,
            "axes.labelsize": 8,
            "legend.fontsize": 7,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "pdf.fonttype": 42,
        }
    )


def method_label(method: str, b: int | None = None) -> str:
    """'HashWH (b=7)' style labels; b only for hashwh."""
    label = METHOD_LABELS.get(method, method)
    return f"{label} (b={int(b)})" if b is not None and method == "hashwh" else label


# HashWH's curves, one per hash size b: the k-th smallest b of a figure gets the k-th colour
# and line style (colours apart from every other method's, the first HashWH's own purple).
HASHWH_COLORS = ("#7570b3", "#1f78b4", "#e31a1c", "#8c510a", "#17becf", "#3f007d")
HASHWH_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)))


def method_color(method: str, rank: int | None = None):
    """One colour per method; HashWH's ``rank``-th hash size (0 = smallest b of the figure) its
    own colour of ``HASHWH_COLORS``."""
    if method == "hashwh" and rank is not None:
        return HASHWH_COLORS[rank % len(HASHWH_COLORS)]
    return _PALETTE.get(method, "#000000")


def panel_title(label: str, panels: int, width: float) -> str:
    """A column title that fits its panel, one of ``panels`` columns in a figure ``width``
    inches wide: a title longer than about 80% of the panel breaks before its parenthesis
    ('HashWH' over '(b=7)'), then wraps at spaces."""
    panel = (width - 1.4) / panels  # less the row labels and the colorbar
    chars = max(6, int(0.8 * panel / 0.075))  # about 0.075 in per character at 9 pt
    if len(label) > chars:
        label = label.replace(" (", "\n(")
    return "\n".join(
        textwrap.fill(part, chars, break_long_words=False) for part in label.split("\n")
    )


def heatmap_grid_width(panels: int) -> float:
    """A page wide, or wider where many columns of heatmaps would leave each too narrow to
    read (about 0.75 in per panel, the colorbar besides)."""
    return max(PAGE_WIDTH, 0.75 * panels + 1.0)


def draw_label(draw: str | int) -> str:
    """A g* draw, by number (0) or as a spectrum target's id ('draw0'), as a figure prints it
    ('draw 1': draws are numbered from 1 in figures; spectrum.figure_draw = 0 is draw 1)."""
    number = str(draw).removeprefix("draw")
    return f"draw {int(number) + 1}" if number.isdigit() else str(draw)


def subplots(rows: int = 1, cols: int = 1, **kwargs):
    """plt.subplots with constrained layout (titles, colorbars and legends never overlap) and
    a 2-D axes array."""
    return plt.subplots(rows, cols, squeeze=False, layout="constrained", **kwargs)


def legend_below(fig, ax, max_columns: int = 6) -> None:
    """One legend for the whole figure, outside the axes, below them."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), max_columns))


MIN_LOG_LABELS = 3  # two labels leave a reader unsure of a log axis's scale


def _log_locator(low: float, high: float):
    """The locator of a log axis from ``low`` to ``high`` with at least MIN_LOG_LABELS ticks:
    powers of ten where the range holds that many, else 1-2-5 steps, else every integer
    multiple, else (a range under a factor of about three) evenly spaced round values."""
    from matplotlib.ticker import LogLocator, MaxNLocator

    decades = 10.0 ** np.arange(np.floor(np.log10(low)), np.ceil(np.log10(high)) + 1)
    for subs in ((1.0,), (1.0, 2.0, 5.0), tuple(float(i) for i in range(1, 10))):
        # counted here: LogLocator itself falls back to dense linear ticks below two
        ticks = np.outer(decades, subs).ravel()
        inside = (ticks >= low * (1 - 1e-9)) & (ticks <= high * (1 + 1e-9))
        if np.sum(inside) >= MIN_LOG_LABELS:
            return LogLocator(base=10, subs=subs, numticks=12)
    return MaxNLocator(nbins=4, min_n_ticks=MIN_LOG_LABELS)


def readable_log_axes(fig) -> None:
    """Label every log axis of ``fig`` at MIN_LOG_LABELS values or more, whatever its range
    (the default labels powers of ten only: one label, or none, on a range under a decade).
    Call it once everything is plotted: it reads the axes' final limits."""
    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter

    for ax in fig.axes:
        for name in ("x", "y"):
            axis = getattr(ax, f"{name}axis")
            if axis.get_scale() != "log":
                continue
            low, high = sorted(getattr(ax, f"get_{name}lim")())
            if not 0 < low < high:
                continue
            axis.set_major_locator(_log_locator(low, high))
            small = 1e-3 <= low and high <= 1e4  # plain numbers read best in this range
            if small:
                axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            else:  # every tick the locator placed labelled (not only some multiples)
                axis.set_major_formatter(
                    LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(np.inf, np.inf))
                )
            axis.set_minor_formatter(NullFormatter())


class Curve(NamedTuple):
    """One curve of a figure: its id in the table (``variant``), its label, colour and line
    style (HashWH's hash sizes differ in both)."""

    variant: str
    label: str
    color: object
    style: object = "-"


def curves_of(table) -> list[Curve]:
    """The curves of a table in a fixed order (the registries' order of methods, HashWH by
    increasing b), labelled and coloured from its typed ``method`` and ``b`` columns (``b``
    where the table splits HashWH by hash size; the ``variant`` column is only an id)."""
    columns = ["variant", "method"] + (["b"] if "b" in table else [])
    ids = table[columns].drop_duplicates("variant")
    rank = {name: i for i, name in enumerate(METHOD_LABELS)}
    found = []
    for row in ids.itertuples(index=False):
        b = getattr(row, "b", None)
        b = int(b) if row.method == "hashwh" and b is not None and b == b else None
        found.append((rank.get(row.method, len(rank)), b or 0, row.variant, row.method, b))
    bs = sorted({b for *_, method, b in found if b is not None})
    curves = []
    for _, _, variant, method, b in sorted(found):
        rank = bs.index(b) if b is not None else None
        style = HASHWH_STYLES[rank % len(HASHWH_STYLES)] if rank is not None else "-"
        curves.append(Curve(variant, method_label(method, b), method_color(method, rank), style))
    return curves


def degrees(n: int) -> np.ndarray:
    """Degree (number of ones) of every frequency 0..2^n-1 in natural order."""
    return np.array([bin(v).count("1") for v in range(2**n)])


class NothingToShow(ValueError):
    """Raised by a figure function whose configuration leaves it nothing to draw."""


def note_figure(message: str):
    """A figure that says why it has nothing to show (e.g. an appendix figure of a
    configuration with a single train size), instead of failing the workflow."""
    fig, axes = subplots(figsize=(COLUMN_WIDTH, 1.2))
    axes[0, 0].axis("off")
    axes[0, 0].text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=8)
    return fig


PAPER_RUN = "paper"  # config/config.yaml's run_name: the paper's full grid


def mark_run(fig, run: str | None) -> None:
    """Label a figure that a run other than the paper's made, above its top right corner: a
    PNG shared alone must not pass for the paper's figure."""
    if run is None or run == PAPER_RUN:
        return
    fig.text(
        1.0,
        1.0,
        f"run '{run}': not the paper's configuration, nor its numbers",
        ha="right",
        va="bottom",
        fontsize=6,
        color="#b2182b",
    )


def save_figure(fig, path: str | Path, provenance: dict | None = None) -> list[Path]:
    """Save ``fig`` as ``<stem>.pdf`` and ``<stem>.png`` (``path`` may end in either or none),
    each written atomically, with ``provenance`` (JSON) in the files' metadata; close the
    figure. Returns the two paths."""
    import json

    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".pdf", ".png") else path
    text = json.dumps(provenance or {}, sort_keys=True)
    creator = figure_creator((provenance or {}).get("whcore_version", ""))
    metadata = {
        ".pdf": {"Creator": creator, "Subject": text},
        ".png": {"Software": creator, "whcore-provenance": text},
    }
    written = []
    for suffix in (".pdf", ".png"):
        target = stem.with_suffix(suffix)
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=suffix[1:], metadata=metadata[suffix])
        written.append(target)
    plt.close(fig)
    return written


apply_style()
