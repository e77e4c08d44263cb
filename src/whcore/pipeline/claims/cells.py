"""From runs to units, and the paired test of every cell: what each claim's verdict rests on.

The unit of replication is the g* draw (synthetic data: its data seeds share the target, so
they are averaged within it), the subsample (real data: a data seed), a forest (the ablation).
Runs that share a unit are not independent, so each method's value is first averaged over its
training seeds (and data seeds) within a unit; tests then pair units. A cell (one train size,
one (n, c), ...) with fewer than MIN_UNITS finished units gets no test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .levels import MIN_UNITS

__all__ = [
    "CELL_STATS",
    "below_threshold",
    "compare_cells",
    "corrected_resampled",
    "one_sided_p",
    "paired",
    "side",
    "unit_means",
]


def side(rows: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """One value per run (``keys``) and whether that run diverged."""
    frame = rows[keys + [value, "diverged"]].rename(columns={value: "value"})
    return frame.drop_duplicates(keys).set_index(keys)


def unit_means(runs: pd.DataFrame, units: list[str]) -> pd.DataFrame:
    """``side`` frames averaged over training seeds within each unit (index ``units``): a unit
    with any diverged run counts as diverged (its mean is over the finished runs)."""
    frame = runs.reset_index()
    kept = frame["value"].where(~frame["diverged"])
    grouped = frame.assign(value=kept).groupby(units, sort=True)
    return grouped.agg(value=("value", "mean"), diverged=("diverged", "any"))


def paired(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Units present on both sides: columns a, b, a_diverged, b_diverged."""
    joined = a.add_suffix("_a").join(b.add_suffix("_b"), how="inner").reset_index()
    names = {"value_a": "a", "value_b": "b", "diverged_a": "a_diverged", "diverged_b": "b_diverged"}
    return joined.rename(columns=names)


# The columns ``compare_cells`` gives each cell, beside the cell's own.
CELL_STATS = (
    "units",
    "mean",
    "sd",
    "sem",
    "p_greater",
    "p_less",
    "a_diverged",
    "b_diverged",
    "a_only",
    "b_only",
)


def compare_cells(pairs: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """Per cell of ``pairs`` (one row per unit; columns ``cell``, a, b, a_diverged, b_diverged):
    finished units, the mean difference a - b and its standard error, one-sided paired t-test
    p-values for a > b and a < b, the diverged units per side and the units where only a (only
    b) diverged."""
    if pairs.empty:
        return pd.DataFrame(columns=[*cell, *CELL_STATS])
    # Every claim and every replication of the calibration suite runs through here: the frame is
    # built once from arrays (adding columns one by one cost three times as much).
    a_div = pairs["a_diverged"].to_numpy(dtype=bool)
    b_div = pairs["b_diverged"].to_numpy(dtype=bool)
    a, b = pairs["a"].to_numpy(dtype=float), pairs["b"].to_numpy(dtype=float)
    counts = {
        "a_diverged": a_div,
        "b_diverged": b_div,
        "a_only": a_div & ~b_div,
        "b_only": b_div & ~a_div,
    }
    diff = np.where(a_div | b_div, np.nan, a - b)
    frame = pd.DataFrame({**{c: pairs[c] for c in cell}, "diff": diff, **counts})
    grouped = frame.groupby(cell, sort=True)
    moments = grouped["diff"].agg(["count", "mean", "std"])
    sums = grouped[list(counts)].sum()
    units = moments["count"].to_numpy(dtype=float)
    mean, sd = moments["mean"].to_numpy(dtype=float), moments["std"].to_numpy(dtype=float)
    sem = sd / np.sqrt(units)
    enough = (units >= MIN_UNITS) & (sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / sem
    greater, less = one_sided_p(t, np.maximum(units - 1, 1))
    stats_of_cells = {
        "units": moments["count"].to_numpy(),
        "mean": mean,
        "sd": sd,
        "sem": sem,
        "p_greater": np.where(enough, greater, np.nan),
        "p_less": np.where(enough, less, np.nan),
        **{c: sums[c].to_numpy(dtype=int) for c in counts},
    }
    cells = moments.index.to_frame(index=False)
    return pd.concat([cells, pd.DataFrame(stats_of_cells)[list(CELL_STATS)]], axis=1)


def one_sided_p(t, df) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided p-values (a > b, a < b) of paired t statistics ``t`` with ``df`` degrees
    of freedom: every cell test of the engine goes through here, so a calibration test can
    swap it for a deliberately wrong one and see the suite fail."""
    return stats.t.sf(t, df), stats.t.cdf(t, df)


def corrected_resampled(cells: pd.DataFrame, test_over_train: float) -> pd.DataFrame:
    """``compare_cells``'s cells whose units are resamples of one dataset with overlapping
    splits (forests on their own splits of one table): Nadeau and Bengio's corrected resampled
    t-test, the variance of a cell's mean s^2 (1/J + n_test / n_train) instead of s^2 / J over
    its J units (Machine Learning 52, 2003), since units that share rows are positively
    correlated and the plain test would be anti-conservative."""
    units = cells["units"].to_numpy(dtype=float)
    sd = cells["sd"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        sem = sd * np.sqrt(1 / units + test_over_train)
        t = cells["mean"].to_numpy(dtype=float) / sem
    greater, less = one_sided_p(t, np.maximum(units - 1, 1))
    enough = (units >= MIN_UNITS) & (sd > 0)
    return cells.assign(
        sem=sem, p_greater=np.where(enough, greater, np.nan), p_less=np.where(enough, less, np.nan)
    )


def below_threshold(units: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Pairs (one row per unit) that test "the value is below ``threshold``" as "a beats b":
    a is the threshold, b the unit's value."""
    frame = units.reset_index()
    return frame.assign(a=threshold, a_diverged=False).rename(
        columns={"value": "b", "diverged": "b_diverged"}
    )
