"""claims.power's "units needed": an interval that holds its confidence, "no number of units"
only where a cell is significantly against the claim, and units named by their own key."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from whcore.pipeline.claims import power
from whcore.pipeline.claims.power import INTERVAL, cell_moments, effect_interval, needed_line


def one_cell(rng, effect: float, units: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cell": 0,
            "unit": range(units),
            "a": rng.normal(effect, 1.0, units),
            "b": 0.0,
            "a_diverged": False,
            "b_diverged": False,
        }
    )


def test_the_effect_interval_covers_the_true_effect_at_its_confidence():
    """From 5 units the interval (noncentral t) holds the true standardized effect in INTERVAL
    of the runs: the units needed at its ends, simulated with the run's own SD, bracket the
    units the true effect needs."""
    rng, runs, effect, units = np.random.default_rng(0), 1000, 0.5, 5
    x = rng.normal(effect, 1.0, (runs, units))
    sd = x.std(axis=1, ddof=1)
    low, high = effect_interval(x.mean(axis=1), sd, np.full(runs, units))
    covered = np.mean((low / sd <= effect) & (effect <= high / sd))  # the true SD is 1
    se = np.sqrt(INTERVAL * (1 - INTERVAL) / runs)
    assert abs(covered - INTERVAL) < 2.5 * se, covered
    assert (low < high).all()


def test_no_number_of_units_only_where_a_cell_is_significantly_against(monkeypatch):
    """Every true cell in favour (0.3 SD), 5 units: the old rule (a measured mean at or below
    0) said "no number of units settles it" in about a quarter of the runs; a cell significantly
    below 0 happens in at most ALPHA of them."""
    monkeypatch.setattr(power, "fewest_units", lambda *args, **kwargs: 7)  # the wording only
    rng, runs = np.random.default_rng(1), 400
    lines = [needed_line(one_cell(rng, 0.3, 5), ["cell"]) for _ in range(runs)]
    rate = np.mean([line.startswith("no number of units") for line in lines])
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs), rate
    assert all("80% interval 7 to 7" in line for line in lines if not line.startswith("no "))
    against = needed_line(one_cell(rng, -3.0, 5), ["cell"])
    assert against.startswith("no number of units settles it in favour")
    assert "significantly below 0" in against


def test_subsamples_of_two_train_sizes_are_independent_units():
    """Real data: data seed 0 at train size 100 and at 200 are two subsamples, not one unit."""
    rng = np.random.default_rng(2)
    frames = [
        one_cell(rng, 0.2, 6).assign(train_size=size, data_seed=range(6)).drop(columns="unit")
        for size in (100, 200)
    ]
    common = rng.normal(0, 3.0, 6)  # shared by the two sizes only if they were one unit
    pairs = pd.concat(frames, ignore_index=True).assign(a=lambda f: f.a + np.tile(common, 2))
    _, cov, units = cell_moments(pairs.drop(columns="cell"), ["train_size"])
    assert cov[0, 1] != 0  # the default key: the data seed alone, one unit at both sizes
    unit = ["train_size", "data_seed"]
    _, cov, units = cell_moments(pairs.drop(columns="cell"), ["train_size"], unit)
    assert cov[0, 1] == 0 and cov[0, 0] > 0 and list(units) == [6, 6]


@pytest.mark.parametrize("effect", [0.0, -0.1])
def test_a_measured_effect_at_or_below_0_by_chance_leaves_the_interval_open(effect):
    line = needed_line(
        pd.DataFrame(
            {
                "cell": 0,
                "unit": range(5),
                "a": effect + np.array([-1.0, -0.5, 0.0, 0.5, 1.0]),
                "b": 0.0,
                "a_diverged": False,
                "b_diverged": False,
            }
        ),
        ["cell"],
    )
    assert line.startswith("more than 500 units per cell would give it 80% power"), line
    assert "80% interval" in line and "to more than 500" in line


def test_verdicts_only_skips_the_units_needed_line_and_nothing_else():
    """Inside ``verdicts_only`` (the window sensitivity's extra evaluations) needed_line says
    nothing; outside, and after it, the same line as before."""
    pairs = one_cell(np.random.default_rng(3), 0.3, 5)
    line = needed_line(pairs, ["cell"])
    assert "units per cell would give it" in line
    with power.verdicts_only():
        assert needed_line(pairs, ["cell"]) == ""
    assert needed_line(pairs, ["cell"]) == line
