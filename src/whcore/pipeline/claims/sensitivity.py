"""The sensitivity lines of the claims a fixed constant decides (docs/fidelity.md, "Margins and
thresholds"): the values of the constant the claim would hold for, or be refuted at, so that a
reader who would have fixed another value sees where the verdict turns. Each constant stays as
fixed in advance; these lines never change a verdict."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from .levels import ALPHA
from .verdicts import holm

FIXED = "fixed in advance"


def _bounds(cells: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The cells with a spread and their one-sided 95% t quantiles."""
    finite = cells.dropna(subset=["sem"])
    return finite, stats.t.ppf(1 - ALPHA, finite["units"] - 1)


def margin_line(margin: float, cells: pd.DataFrame) -> str:
    """An equivalence claim (TOST per cell, ``compare_cells`` of a - b): it holds at a margin
    above every cell's |mean| + its one-sided 95% bound."""
    finite, quantile = _bounds(cells)
    if finite.empty:
        return ""
    smallest = float((finite["mean"].abs() + quantile * finite["sem"]).max())
    return (
        f"at the margin ±{margin:g}, {FIXED}; it would hold for margins from ±{smallest:.3g} on "
        "(the largest |mean| + one-sided 95% bound of a cell)"
    )


def factor_line(factor: float, cells: pd.DataFrame) -> str:
    """A claim "a / b at least ``factor``" tested on log10 ratios minus log10(factor) (cells of
    ``compare_cells``): the largest factor every cell would hold at."""
    finite, quantile = _bounds(cells)
    if finite.empty:
        return ""
    low = finite["mean"] + np.log10(factor) - quantile * finite["sem"]
    return (
        f"at {factor:g}x, {FIXED}; every cell would hold for factors up to "
        f"{10 ** float(low.min()):.3g}x (the smallest one-sided 95% lower bound of a cell)"
    )


def share_line(share: float, adjusted) -> str:
    """A "nearly all" claim whose cells have the Holm-adjusted p-values ``adjusted`` on the side
    that makes them hold: the largest share of the cells it would hold for."""
    adjusted = np.nan_to_num(np.asarray(adjusted, dtype=float), nan=1.0)
    if not len(adjusted):
        return ""
    held = int((adjusted < ALPHA).sum())
    return (
        f"at {share:.0%} of the cells, {FIXED}; {held} of {len(adjusted)} hold after Holm: it "
        f"would hold for shares up to {held / len(adjusted):.0%} (where no cell refutes it)"
    )


def nearly_all_line(share: float, cells: pd.DataFrame) -> str:
    """``share_line`` of "a beats b in nearly all cells" (``compare_cells``): a cell where a
    diverged more often cannot hold."""
    can_win = (cells["a_diverged"] <= cells["b_diverged"]).to_numpy()
    return share_line(share, np.where(can_win, holm(cells["p_greater"]), 1.0))


def first_true(check: Callable[[float], bool], low: float, high: float) -> float | None:
    """The smallest value in [low, high] where ``check`` (false below it, true from it on)
    becomes true, by bisection to 1e-4 of the range; None where it is false at ``high``."""
    if not check(high):
        return None
    if check(low):
        return low
    for _ in range(int(np.ceil(np.log2(1e4)))):
        middle = (low + high) / 2
        low, high = (low, middle) if check(middle) else (middle, high)
    return high
