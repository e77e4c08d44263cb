"""Seeded tables with a known effect for calibrating the claims engine (tests/calibration/test_calibration.py).

Every generator draws each method's value per unit (subsample) as its level plus unit noise of
the method's own size (unequal between methods), and each training seed's value as that plus a
small seed noise; curves carry AR(1) noise correlated from epoch to epoch. The levels are the
only place an effect enters, so the power a claim should have follows from them
(``paired_power``)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from whcore.pipeline.claims.power import claim_power

UNITS = 6  # units per cell of these power tables (their own design; faithful.yaml has 5)
SEED_NOISE = 0.02  # a training seed's deviation from its unit's value


def ar1(rng, shape, phi: float, sd: float) -> np.ndarray:
    """AR(1) noise along the last axis with stationary standard deviation ``sd``."""
    out = np.empty(shape)
    out[..., 0] = rng.normal(0, sd, shape[:-1])
    innovations = rng.normal(0, sd * np.sqrt(1 - phi**2), shape)
    for t in range(1, shape[-1]):
        out[..., t] = phi * out[..., t - 1] + innovations[..., t]
    return out


def paired_power(cells: list[tuple[float, float]], units: int = UNITS) -> float:
    """The predicted power of "holds in every cell" (``claim_power``, the function behind the
    report's units-needed line) for cells with (mean difference, SD of a unit's difference)."""
    effects, sds = zip(*cells)
    return claim_power(np.array(effects), np.array(sds), units)


def unit_sd(noise: float, seeds: int) -> float:
    """The SD of a unit's value: its unit noise and its seeds' mean noise."""
    return float(np.hypot(noise, SEED_NOISE / np.sqrt(seeds)))


# --- the spectrum experiment ----------------------------------------------------------------------

SPECTRUM_VARIANTS = {
    "standard": ("standard", np.nan),
    "fullwh": ("fullwh", np.nan),
    "ens": ("ens", np.nan),
    "hashwh_b5": ("hashwh", 5.0),
    "hashwh_b7": ("hashwh", 7.0),
    "hashwh_b8": ("hashwh", 8.0),
}
SPECTRUM_NOISE = {
    "standard": 0.10,
    "fullwh": 0.03,
    "ens": 0.06,
    "hashwh_b5": 0.05,
    "hashwh_b7": 0.04,
    "hashwh_b8": 0.03,
}
SIZES = (100, 200)
DRAWS, DATA_SEEDS, SEEDS = 6, 1, 2  # each unit its own g* draw (the unit of the claims)
STATIC = [
    "amp_deg4",
    "amp_deg5",
    "sae_full",
    "sae_support",
    *(f"sae_deg{d}" for d in range(1, 6)),
    "energy_deg4",
    "energy_deg5",
]
NULL_LEVELS = {
    "amp_deg4": 0.3,
    "amp_deg5": 0.3,
    "sae_full": 1.0,
    "sae_support": 0.5,
    **{f"sae_deg{d}": 0.3 for d in range(1, 6)},
    "energy_deg4": 0.05,
    "energy_deg5": 0.05,
}


def spectrum_levels(**changes) -> dict[str, dict[str, float]]:
    """Per variant, per column: the null levels with ``changes`` ({variant: {column: level}})."""
    levels = {v: dict(NULL_LEVELS) for v in SPECTRUM_VARIANTS}
    for variant, columns in changes.items():
        levels[variant].update(columns)
    return levels


def spectrum_tables(rng, levels, epochs: int = 12, curves=None) -> dict[str, pd.DataFrame]:
    """spectrum_selected and spectrum_epochs: static columns at their levels plus noise (the
    same every epoch), energy of degrees 1-2 fixed at 1 each (the high-degree share is then the
    mean of energy_deg4 and energy_deg5), and ``curves(rng, variant, runs, epochs)`` -> {column:
    (runs, epochs) array} for curve-shaped columns."""
    units = list(itertools.product([f"draw{i}" for i in range(DRAWS)], SIZES, range(DATA_SEEDS)))
    selected, frames = [], []
    for variant, (method, b) in SPECTRUM_VARIANTS.items():
        noise = SPECTRUM_NOISE[variant]
        unit_values = {c: levels[variant][c] + rng.normal(0, noise, len(units)) for c in STATIC}
        keys = [(*u, s) for u in units for s in range(SEEDS)]
        runs = len(keys)
        frame = pd.DataFrame(keys, columns=["dataset", "train_size", "data_seed", "seed"])
        frame = frame.assign(variant=variant, method=method, b=b)
        selected.append(frame.assign(best_epoch=1, diverged=False))
        values = {
            c: np.repeat(v, SEEDS) + rng.normal(0, SEED_NOISE, runs) for c, v in unit_values.items()
        }
        values["energy_deg1"] = values["energy_deg2"] = np.ones(runs)
        long = frame.loc[frame.index.repeat(epochs + 1)].reset_index(drop=True)
        long["epoch"] = np.tile(np.arange(epochs + 1), runs)
        for column, per_run in values.items():
            long[column] = np.repeat(per_run, epochs + 1)
        if curves is not None:
            for column, matrix in curves(rng, variant, runs, epochs + 1).items():
                long[column] = matrix.reshape(-1)
        frames.append(long)
    return {
        "spectrum_selected": pd.concat(selected, ignore_index=True),
        "spectrum_epochs": pd.concat(frames, ignore_index=True),
    }


def spectrum_noise(variant: str) -> float:
    return unit_sd(SPECTRUM_NOISE[variant], SEEDS)


def spectrum_cells(levels, pairs, columns, sizes=SIZES) -> list[tuple[float, float]]:
    """(difference, SD) per cell of "a beats b" comparisons: ``pairs`` of (a, b, sign) where
    sign +1 means higher is better."""
    cells = []
    for (a, b, sign), column, _ in itertools.product(pairs, columns, sizes):
        difference = sign * (levels[a][column] - levels[b][column])
        cells.append((difference, float(np.hypot(spectrum_noise(a), spectrum_noise(b)))))
    return cells


# --- the synthetic experiment ---------------------------------------------------------------------

SYNTHETIC_VARIANTS = {
    "standard": ("standard", np.nan),
    "ens": ("ens", np.nan),
    "hashwh_b7": ("hashwh", 7.0),
    "hashwh_b10": ("hashwh", 10.0),
    "hashwh_b13": ("hashwh", 13.0),
}
SYNTHETIC_NOISE = {
    "standard": 0.08,
    "ens": 0.05,
    "hashwh_b7": 0.03,
    "hashwh_b10": 0.03,
    "hashwh_b13": 0.02,
}
CS = (1, 2, 3)


def synthetic_selected(rng, levels: dict[str, float], seeds: int = 1) -> dict:
    """synthetic_selected for n = 25, c = 1-3, 6 draws with one data seed each: test R^2 at each
    variant's level (``levels``, default 0.5) plus unit and seed noise."""
    units = list(itertools.product([25], CS, range(6), range(1)))  # 6 g* draws, the units
    frames = []
    for variant, (method, b) in SYNTHETIC_VARIANTS.items():
        level = levels.get(variant, 0.5)
        unit_values = level + rng.normal(0, SYNTHETIC_NOISE[variant], len(units))
        keys = [(*u, s) for u in units for s in range(seeds)]
        frame = pd.DataFrame(keys, columns=["n", "c", "draw", "data_seed", "seed"])
        value = np.repeat(unit_values, seeds) + rng.normal(0, SEED_NOISE, len(keys))
        frames.append(
            frame.assign(
                variant=variant, method=method, b=b, test_r2=value, val_r2=value, diverged=False
            )
        )
    return {"synthetic_selected": pd.concat(frames, ignore_index=True)}


def synthetic_sd(a: str, b: str, seeds: int = 1) -> float:
    return float(np.hypot(unit_sd(SYNTHETIC_NOISE[a], seeds), unit_sd(SYNTHETIC_NOISE[b], seeds)))


# --- the real data --------------------------------------------------------------------------------

REAL_NOISE = {"standard": 0.06, "hashwh": 0.03, "lasso": 0.02, "rf": 0.04, "xgboost": 0.05}
REAL_SIZES = (40, 120, 200)
REAL_UNITS = 5


def real_selected(rng, gains, units: int = REAL_UNITS) -> dict:
    """real_selected for one dataset at 3 train sizes: HashWH (one b) at 0.5 + ``gains[size]``,
    every rival at 0.5; networks with 2 seeds, baselines one fit per unit."""
    frames = []
    keys = list(itertools.product(["entacmaea"], REAL_SIZES, range(units)))
    for variant, noise in REAL_NOISE.items():
        network = variant in ("standard", "hashwh")
        seeds = 2 if network else 1
        level = np.array([0.5 + (gains[k[1]] if variant == "hashwh" else 0.0) for k in keys])
        unit_values = level + rng.normal(0, noise, len(keys))
        runs = [(*k, s if network else -1) for k in keys for s in range(seeds)]
        frame = pd.DataFrame(runs, columns=["dataset", "train_size", "data_seed", "seed"])
        value = np.repeat(unit_values, seeds) + (
            rng.normal(0, SEED_NOISE, len(runs)) if network else 0.0
        )
        frames.append(
            frame.assign(
                variant=variant,
                method=variant,
                b=7.0 if variant == "hashwh" else np.nan,
                test_r2=value,
                val_r2=value,
                diverged=False,
            )
        )
    return {"real_selected": pd.concat(frames, ignore_index=True)}
