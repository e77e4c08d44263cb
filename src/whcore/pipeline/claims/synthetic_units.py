"""The synthetic experiment's units as its claims read them (``claims.synthetic``,
``claims.speed``): g* draws within each (n, c), a draw's data and training seeds averaged within
it; times only from the one draw trained one model at a time, whose data seeds are the units."""

from __future__ import annotations

import pandas as pd

from .cells import side, unit_means

__all__ = ["RUN", "TIMED_UNIT", "TIMED_UNITS", "UNIT", "UNITS", "timed_scope", "variant_units"]

RUN = ["n", "c", "draw", "data_seed", "seed"]
UNIT = ["n", "c", "draw"]
UNITS = ("g* draw", "g* draws; data and training seeds averaged within each")
# Times come from the one g* draw the plan trains one model at a time (the paper's Figures 4b
# and A6 time "the first draw of g*" only): their units are that draw's data seeds.
TIMED_UNIT = [*UNIT, "data_seed"]
TIMED_UNITS = ("data seed", "data seeds of the timed g* draw; training seeds averaged within each")


def variant_units(rows: pd.DataFrame, variant: str, value: str = "test_r2", unit=UNIT):
    """The unit means (``unit``) of ``variant``'s ``value``."""
    return unit_means(side(rows[rows["variant"] == variant], RUN, value), unit)


def timed_scope(draws) -> str:
    """The scope of a claim read from times: the timed draws only, their data seeds the units."""
    shown = ", ".join(str(int(d)) for d in sorted(set(draws)))
    return (
        f"times on g* draw {shown} only, the draw trained one model at a time (the paper times "
        "the first draw only); units: its data seeds"
    )
