"""The spectrum experiment's runs as the claims read them: each run's values at the end of
training (the mean over its last ``FINAL_EPOCHS`` epochs, with derived columns) and their mean
per unit (a g* draw: its data seeds share its target, so they are averaged within it, as are
training seeds). ``claims.spectrum`` and ``claims.energy`` both build on these."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import paired

__all__ = [
    "FINAL_EPOCHS",
    "HIGH",
    "LOW",
    "OFF_TARGET",
    "RUN",
    "UNIT",
    "UNITS",
    "WINDOWS",
    "final_values",
    "hashwh_variants_by_b",
    "unit_values",
    "units_of",
    "versus",
    "with_off_target",
]

RUN = ["dataset", "train_size", "data_seed", "seed"]  # dataset: one g* draw
UNIT = ["dataset", "train_size"]  # dataset: one g* draw
UNITS = ("g* draw", "g* draws; data and training seeds averaged within each")
FINAL_EPOCHS = 10  # a run's value: its mean over this many last epochs
WINDOWS = (FINAL_EPOCHS // 2, FINAL_EPOCHS * 2)  # the other windows its sensitivity is told
HIGH, LOW = (4, 5), (1, 2)  # the target's high and low degrees (a degree ladder 1..5)
OFF_TARGET = (2, 3)  # degrees whose energy outside the target frequency the energy claims read


def hashwh_variants_by_b(table) -> list[str]:
    """The HashWH curves of a table (split by hash size), by increasing b."""
    hashed = table.loc[table["method"] == "hashwh", ["variant", "b"]].drop_duplicates("variant")
    return hashed.sort_values("b")["variant"].tolist()


def with_off_target(epochs: pd.DataFrame) -> pd.DataFrame:
    """``epochs`` with ``energy_deg<d>_off`` for the low degrees: the energy of degree d outside
    the target's frequency (the degree's energy minus its target coefficient squared; the
    paper's targets have one frequency per degree, whose coefficient ``amp_deg<d>`` is)."""
    columns = {
        f"energy_deg{d}_off": epochs[f"energy_deg{d}"] - epochs[f"amp_deg{d}"] ** 2
        for d in OFF_TARGET
        if {f"energy_deg{d}", f"amp_deg{d}"} <= set(epochs.columns)
    }
    return epochs.assign(**columns)


def final_values(epochs: pd.DataFrame, last: int = FINAL_EPOCHS) -> pd.DataFrame:
    """Each run's metrics averaged over its last ``last`` epochs, with the derived columns the
    claims read (``amp_err<d>``: -|amplitude - 1|, an overshoot is no better; ``-<sae>``;
    ``gap``: whole-spectrum minus support SAE). A run with a non-finite value there counts as
    diverged."""
    keys = ["dataset", "variant", "method", "train_size", "data_seed", "seed"]
    trained = epochs[epochs["epoch"] > 0]
    end = trained.groupby(keys)["epoch"].transform("max")
    window = with_off_target(trained[trained["epoch"] > end - last])
    metrics = [c for c in window.columns if c.startswith(("sae_", "energy_deg", "amp_deg"))]
    final = window.groupby(keys, sort=True)[metrics].mean().reset_index()
    final["diverged"] = ~np.isfinite(final[metrics].to_numpy(dtype=float)).all(axis=1)
    for column in [c for c in metrics if c.startswith("amp_deg")]:
        final[f"amp_err{column.removeprefix('amp_deg')}"] = -(final[column] - 1.0).abs()
    for column in [c for c in metrics if c.startswith("sae_")]:
        final[f"log_{column}"] = _log(final[column])
        final[f"-log_{column}"] = -final[f"log_{column}"]
    if {"sae_full", "sae_support"} <= set(final.columns):
        final["log_gap"] = final["log_sae_full"] - final["log_sae_support"]
        final["-log_gap"] = -final["log_gap"]
    energies = [f"energy_deg{d}" for d in HIGH + LOW]
    if set(energies) <= set(final.columns):
        high = final[[f"energy_deg{d}" for d in HIGH]].sum(axis=1)
        final["high_share"] = high / final[[f"energy_deg{d}" for d in LOW]].sum(axis=1)
        final["log_high_share"] = _log(final["high_share"])
    return final


def log_scale(values: pd.Series) -> pd.Series:
    """The scale SAE and energy ratios are compared on: the natural log, so that a paired test
    estimates the ratio of geometric means (these measures are right-skewed). Every log of the
    claims goes through here, so a calibration test can drop it and see the suite fail."""
    return np.log(values)


def log_of_positive(values: pd.Series) -> pd.Series:
    """``log_scale`` of the positive values; NaN (no log) elsewhere."""
    return log_scale(values.where(values > 0))


def _log(values: pd.Series) -> pd.Series:
    """``log_scale``, a value of exactly 0 read as 1e-12 (a float's floor, not -inf)."""
    return log_scale(values.clip(lower=1e-12))


def unit_values(final: pd.DataFrame) -> pd.DataFrame:
    """``final_values`` averaged over each unit's training seeds (index variant x UNIT); a unit
    with a diverged run counts as diverged, its values the mean over its finished runs."""
    metrics = [c for c in final.columns if c not in (*RUN, "variant", "method", "diverged")]
    finished = final[metrics].where(~final["diverged"], axis=0)
    grouped = finished.assign(variant=final["variant"], **{k: final[k] for k in UNIT})
    values = grouped.groupby(["variant", *UNIT], sort=True)[metrics].mean()
    values["diverged"] = final.groupby(["variant", *UNIT], sort=True)["diverged"].any()
    return values


def units_of(units: pd.DataFrame, variant: str, column: str) -> pd.DataFrame:
    """One value per unit (index UNIT; columns value, diverged) of ``variant``'s ``column``
    (no rows where the variant has no finished units)."""
    mine = units[units.index.get_level_values("variant") == variant].droplevel("variant")
    return mine[[column, "diverged"]].rename(columns={column: "value"})


def versus(units, a: str, b: str, column: str, **labels) -> pd.DataFrame:
    """Unit pairs (a's ``column``, b's) with constant label columns (e.g. hash_size=8)."""
    return paired(units_of(units, a, column), units_of(units, b, column)).assign(**labels)
