"""The claims engine's calibration at its least-favourable nulls, at the design of every shipped
configuration (tests/calibration/test_calibration.py, tests/calibration/test_calibration_mutation.py, `make
calibration`).

A claim over several cells is false as soon as one cell is: its least-favourable null puts
exactly one cell at the boundary (no effect for a comparison, exactly at the threshold for a
threshold claim) and every other cell strongly in favour (STRONG standard deviations of a
unit's difference). A claim that needs a share of the cells ("nearly all": ``share`` of them)
is false when one cell fewer than it needs is in favour: there the boundary cells are the rest.
Where the engine tests each cell at alpha, the claim then says "holds" with probability about
alpha; more is an anticonservative engine, much less an over-conservative one.

Each case builds tables with only the columns and methods its claim reads (the other claims of
the same function skip themselves), at the units per cell, data seeds per unit, training seeds,
cells and methods of one configuration (``designs``). A unit's value is its unit noise plus the
mean over its data seeds (noise WITHIN x the unit noise) and training seeds (SEED_SHARE x):
the g* draw is the unit, the data seeds of a draw are not independent units. Skewed measures
(SAE, energy ratios) also come lognormal (log-scale noise SIGMA, small multiplicative noise
within a unit), their null as equal medians.

``false_holds_rates`` runs the cases, ``check_rates`` returns the failures: false-"holds" above
alpha + 2 SE, and, where the case is exact (Gaussian or log-normal units, a t-test at alpha per
cell), below alpha - 2 SE. ``power_rates`` measures "holds" at a planted effect (every cell +1
standard deviation of a unit's difference)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from calibration_tables import ar1
from scipy.stats import norm

from whcore.pipeline.claims import (
    ablation_claims,
    real_claims,
    synthetic_claims,
)
from whcore.pipeline.claims.dynamics import learned_first_claim, overfitting_claim
from whcore.pipeline.claims.levels import ALPHA, FAILS, HOLDS, MIN_UNITS, NEARLY_ALL, SKIPPED
from whcore.pipeline.claims.power import verdicts_only
from whcore.pipeline.claims.sae import (
    COMPARABLE_MARGIN,
    COMPARABLE_SIZES,
    ESSENTIALLY_ZERO,
    PERFECT,
)
from whcore.pipeline.claims.spectrum import spectrum_comparisons
from whcore.pipeline.claims.synthetic import NO_GAIN_MARGIN, ens_degrades_with_n

CONFIGS = ("quick", "faithful", "workstation")
CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
STRONG = 6.0  # the cells in favour at a least-favourable null: this many SDs of a unit difference
PLANTED = 1.0  # every cell's effect when power is measured, in the same SDs
WITHIN = 0.5  # a data seed's deviation from its unit (g* draw), as a share of the unit noise
SEED_SHARE = 0.2  # a training seed's deviation from its (unit, data seed), same share
SIGMA = 1.0  # log-scale unit noise of the lognormal generators
LOG_WITHIN, LOG_SEED = 0.05, 0.02  # log-scale noise within a unit (lognormal generators)


# --- designs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """One experiment of one configuration: independent ``units`` per cell, ``within`` data
    seeds averaged within a unit, ``seeds`` training seeds per (unit, data seed), its ``cells``
    (spectrum and real: train sizes; synthetic: (n, c); ablation: removal steps), the compared
    ``variants`` besides the standard network and HashWH, HashWH's ``hashes`` and, on real data,
    the ``datasets`` with their train sizes."""

    config: str
    experiment: str
    units: int
    within: int = 1
    seeds: int = 1
    cells: tuple = ()
    variants: tuple = ()
    hashes: tuple = ()
    datasets: tuple = ()

    @property
    def label(self) -> str:
        return f"{self.config}: {self.units} units x {self.within} data seeds x {self.seeds} seeds"


def designs(config: str) -> dict[str, Design]:
    """The design of every experiment of ``config/<config>.yaml``."""
    spec = yaml.safe_load((CONFIG_DIR / f"{config}.yaml").read_text())
    spectrum, synthetic, real, ablation = (
        spec[k] for k in ("spectrum", "synthetic", "real", "ablation")
    )
    real_rivals = [m for m in ("standard", "ens") if m in real["methods"]] + list(
        real.get("baselines", {})
    )
    return {
        "spectrum": Design(
            config,
            "spectrum",
            spectrum["draws"],
            spectrum["data_seeds"],
            len(spectrum["seeds"]),
            tuple(spectrum["train_sizes"]),
            tuple(m for m in ("fullwh", "ens") if m in spectrum["methods"]),
            tuple(spectrum["methods"]["hashwh"]["b"]),
        ),
        "synthetic": Design(
            config,
            "synthetic",
            synthetic["draws"],
            synthetic["data_seeds"],
            len(synthetic["seeds"]),
            tuple(itertools.product(synthetic["ns"], synthetic["cs"])),
            tuple(m for m in ("ens",) if m in synthetic["methods"]),
            tuple(synthetic["methods"]["hashwh"]["b"]),
        ),
        "real": Design(
            config,
            "real",
            real["data_seeds"],
            1,
            len(real["seeds"]),
            (),
            tuple(real_rivals),
            datasets=tuple((name, tuple(d["train_sizes"])) for name, d in real["datasets"].items()),
        ),
        "ablation": Design(
            config, "ablation", ablation["repeats"], cells=tuple(range(1, ablation["steps"] + 1))
        ),
    }


# --- unit values ----------------------------------------------------------------------------------


def unit_sd(noise: float, design: Design, log: bool = False) -> float:
    """The SD of a unit's value (on the log scale for lognormal values): its unit noise and the
    mean of its data seeds' and training seeds' noise."""
    if log:
        return math.sqrt(
            SIGMA**2 + LOG_WITHIN**2 / design.within + LOG_SEED**2 / (design.within * design.seeds)
        )
    return noise * math.sqrt(
        1 + WITHIN**2 / design.within + SEED_SHARE**2 / (design.within * design.seeds)
    )


def run_values(
    rng, design: Design, level, noise: float, log: bool = False, spread: float = 1.0
) -> np.ndarray:
    """Values of shape (cells, units, within, seeds): ``level`` per cell (on the log scale for
    lognormal values: the log of the median) plus unit, data-seed and training-seed noise
    (lognormal: ``spread`` times the log-scale noise)."""
    level = np.asarray(level, dtype=float)[:, None, None, None]
    cells, shape = len(level), (design.units, design.within, design.seeds)
    sd_unit, sd_within, sd_seed = (
        (spread * SIGMA, spread * LOG_WITHIN, spread * LOG_SEED)
        if log
        else (noise, WITHIN * noise, SEED_SHARE * noise)
    )
    value = (
        level
        + rng.normal(0, sd_unit, (cells, shape[0], 1, 1))
        + rng.normal(0, sd_within, (cells, shape[0], shape[1], 1))
        + rng.normal(0, sd_seed, (cells, *shape))
    )
    return np.exp(value) if log else value


# --- the spectrum experiment ----------------------------------------------------------------------

# A unit's noise per method, and per (method, column) where a threshold sets the scale: SAE and
# energy shares stay positive (Gaussian, a few SDs from 0) so that a test on the log scale sees
# about the same effect as one on the measure's own scale.
SPECTRUM_NOISE = {
    "standard": 0.10,
    "fullwh": 0.03,
    "ens": 0.06,
    "hashwh": 0.03,
    ("fullwh", "sae_support"): 0.0008,
    ("standard", "energy_deg4"): 0.004,
}
AMP, SAE, SAE_SUPPORT = 0.0, 1.0, 0.5  # base levels (amplitudes stay below 1: |amp - 1| is linear)


def spectrum_variants(design: Design) -> dict[str, tuple[str, float]]:
    """variant -> (method, b) of a spectrum design, HashWH by increasing b."""
    out = {"standard": ("standard", np.nan)}
    out.update({m: (m, np.nan) for m in design.variants})
    out.update({f"hashwh_b{b}": ("hashwh", float(b)) for b in sorted(design.hashes)})
    return out


def hashed(design: Design) -> list[str]:
    return [v for v, (m, _) in spectrum_variants(design).items() if m == "hashwh"]


def regularized(design: Design) -> list[str]:
    return [v for v in spectrum_variants(design) if v != "standard"]


def noise_of(variant: str, column: str = "") -> float:
    method = variant.split("_")[0]
    return SPECTRUM_NOISE.get((method, column), SPECTRUM_NOISE[method])


def spectrum_table(
    rng, design: Design, levels: dict, log: bool = False, spread: tuple = ()
) -> dict:
    """spectrum_selected (every variant of the design) and spectrum_epochs (one trained epoch:
    its values are the run's at the end of training) of the variants in ``levels`` ({(variant,
    column): level per train size}): each column at its level plus noise; energy of degrees 1-2
    fixed at 1 and degree 5's equal to degree 4's, so the high-degree share is energy_deg4.
    ``spread``: (method, factor) pairs that scale a method's log-scale noise (lognormal)."""
    factor = dict(spread)
    methods = spectrum_variants(design)
    keys = list(
        itertools.product(
            design.cells,
            [f"draw{i}" for i in range(design.units)],
            range(design.within),
            range(design.seeds),
        )
    )
    frame = pd.DataFrame(keys, columns=["train_size", "dataset", "data_seed", "seed"])
    selected, epochs = [], []
    for variant, (method, b) in methods.items():
        runs = frame.assign(variant=variant, method=method, b=b)
        selected.append(runs.assign(best_epoch=1, diverged=False))
        if not any(v == variant for v, _ in levels):
            continue
        columns = {
            column: run_values(
                rng, design, level, noise_of(variant, column), log, factor.get(method, 1.0)
            ).reshape(-1)
            for (v, column), level in levels.items()
            if v == variant
        }
        if "energy_deg4" in columns:
            columns.update(energy_deg5=columns["energy_deg4"], energy_deg1=1.0, energy_deg2=1.0)
        epochs.append(runs.assign(epoch=1, **columns))
    return {
        "spectrum_selected": pd.concat(selected, ignore_index=True),
        "spectrum_epochs": pd.concat(epochs, ignore_index=True),
    }


def spectrum_sd(design: Design, a: str, b: str | None = None, log=False, column="") -> float:
    """The SD of a unit's difference a - b in ``column`` (of a's value where b is None)."""
    sd = unit_sd(noise_of(a, column), design, log)
    return float(np.hypot(sd, unit_sd(noise_of(b, column), design, log))) if b else sd


def _base(log: bool, level: float) -> float:
    return math.log(level) if log else level


def learns_degree_levels(degree):
    def levels(design, shift, log):
        column = f"amp_deg{degree}"
        out = {("standard", column): np.full(len(design.cells), AMP)}
        for j, v in enumerate(hashed(design)):
            out[(v, column)] = AMP + shift[:, j] * spectrum_sd(design, v, "standard")
        return out

    return levels


def lower_full_sae_levels(design, shift, log):
    base = _base(log, SAE)
    out = {("standard", "sae_full"): np.full(len(design.cells), base)}
    for j, v in enumerate(hashed(design)):
        out[(v, "sae_full")] = base - shift[:, j] * spectrum_sd(design, v, "standard", log)
    return out


def fullwh_support_levels(design, shift, log):
    return {
        ("fullwh", "sae_support"): _base(log, PERFECT)
        - shift * spectrum_sd(design, "fullwh", None, log, "sae_support")
    }


def sae_with_b_levels(design, shift, log):
    variants = hashed(design)
    level = np.full(len(design.cells), _base(log, SAE))
    out = {(variants[0], "sae_full"): level}
    for k, (small, big) in enumerate(zip(variants, variants[1:])):
        level = level - shift[:, k] * spectrum_sd(design, small, big, log)
        out[(big, "sae_full")] = level
    return out


def regularized_levels(design, shift, log):
    out = {}
    for k, degree in enumerate((4, 5)):
        out[("standard", f"amp_deg{degree}")] = np.full(len(design.cells), AMP)
        for j, v in enumerate(regularized(design)):
            out[(v, f"amp_deg{degree}")] = AMP + shift[:, j, k] * spectrum_sd(design, v, "standard")
    return out


def full_above_support_levels(design, shift, log):
    """Cells (train size, regularizer) of "every regularizer's gap is smaller", then, last, the
    standard network's own gap (whole spectrum - support) per train size."""
    sizes = len(design.cells)

    def gap_sd(v):  # of a unit's gap
        return np.hypot(*(spectrum_sd(design, v, column=c) for c in ("sae_full", "sae_support")))

    own = shift[:, -1] * gap_sd("standard")
    out = {
        ("standard", "sae_support"): np.full(sizes, SAE_SUPPORT),
        ("standard", "sae_full"): SAE_SUPPORT + own,
    }
    for j, v in enumerate(regularized(design)):
        difference_sd = np.hypot(gap_sd(v), gap_sd("standard"))
        out[(v, "sae_support")] = np.full(sizes, SAE_SUPPORT)
        out[(v, "sae_full")] = SAE_SUPPORT + own - shift[:, j] * difference_sd
    return out


def energy_levels(design, shift, log):
    return {
        ("standard", "energy_deg4"): _base(log, ESSENTIALLY_ZERO)
        - shift * spectrum_sd(design, "standard", None, log, "energy_deg4")
    }


def tractable_rivals(design):
    return ["standard", *(v for v in design.variants if v == "ens")]


def best_tractable_levels(design, shift, log):
    """Cells (train size, degree 1-5, rival): the largest b at one level, each rival above it."""
    top, base = hashed(design)[-1], _base(log, SAE)
    out = {}
    for d in range(1, 6):
        out[(top, f"sae_deg{d}")] = np.full(len(design.cells), base)
        for r, rival in enumerate(tractable_rivals(design)):
            sd = spectrum_sd(design, top, rival, log)
            out[(rival, f"sae_deg{d}")] = base + shift[:, d - 1, r] * sd
    return out


def comparable_levels(design, shift, log):
    """Cells (train size 100 or 400, b): the boundary cell (shift 0) differs from the standard
    network by the fixed margin (COMPARABLE_MARGIN), every other cell by 0."""
    margin = COMPARABLE_MARGIN
    out = {("standard", "sae_support"): np.full(len(design.cells), SAE_SUPPORT)}
    for j, v in enumerate(hashed(design)):
        out[(v, "sae_support")] = SAE_SUPPORT + np.where(shift[:, j] == 0, margin, 0.0)
    return out


def comparable_design(design: Design) -> Design:
    return replace(design, cells=tuple(s for s in design.cells if s in COMPARABLE_SIZES))


# Curves: the learned amplitudes (when is a degree learned) and the SAE of degrees 2 and 3.

LEARN_AT, TIME_NOISE, CURVE_EPOCHS = 20.0, 3.0, 100


def learned_first_table(rng, design, shift, log=False):
    """The standard network's amplitude per degree: 0 until the run's learning epoch, then 1.
    Degree 1 is learned at LEARN_AT; degree d (cells: train size x degree 2-5) ``shift`` SDs of
    a unit's difference later; an epoch is a unit's noise plus its runs' (TIME_NOISE each)."""
    keys = list(
        itertools.product(
            design.cells,
            [f"draw{i}" for i in range(design.units)],
            range(design.within),
            range(design.seeds),
        )
    )
    runs = pd.DataFrame(keys, columns=["train_size", "dataset", "data_seed", "seed"])
    sd = np.sqrt(2) * unit_sd(TIME_NOISE, design)
    epoch = np.arange(1, CURVE_EPOCHS + 1)
    columns = {}
    for d in range(1, 6):
        delay = np.zeros(len(design.cells)) if d == 1 else shift[:, d - 2] * sd
        centre = run_values(rng, design, LEARN_AT + delay, TIME_NOISE).reshape(-1, 1)
        columns[f"amp_deg{d}"] = (epoch >= centre).astype(float).reshape(-1)
    long = runs.loc[runs.index.repeat(CURVE_EPOCHS)].reset_index(drop=True)
    long = long.assign(
        epoch=np.tile(epoch, len(runs)), variant="standard", method="standard", **columns
    )
    return {"spectrum_epochs": long}


RISE, CURVE_NOISE, PHI = 0.6, 0.02, 0.9


def overfit_curve(t, rise):
    """Falls to its minimum at 30% of training, then rises by ``rise``."""
    return 0.3 + 0.7 * np.clip(1 - t / 0.3, 0, None) ** 2 + rise * np.clip(t - 0.3, 0, None) / 0.7


def monotone_curve(t):
    return 0.2 + 0.8 * np.exp(-5 * t)


def overfitting_table(rng, design, shift, log=False):
    """SAE curves of degrees 2 and 3 with AR(1) noise (PHI, CURVE_NOISE for every variant).
    The standard network rises by RISE x shift[size, degree, -1] / STRONG after its minimum;
    a HashWH b (cells: train size x degree x b) falls monotonically, or, where its shift is 0
    (the boundary), follows the standard network's curve."""
    keys = list(
        itertools.product(
            design.cells,
            [f"draw{i}" for i in range(design.units)],
            range(design.within),
            range(design.seeds),
        )
    )
    runs = pd.DataFrame(keys, columns=["train_size", "dataset", "data_seed", "seed"])
    t = np.arange(CURVE_EPOCHS) / CURVE_EPOCHS
    size_of = np.repeat(np.arange(len(design.cells)), len(keys) // len(design.cells))
    frames = []
    for j, variant in enumerate(["standard", *hashed(design)]):
        columns = {}
        for k, degree in enumerate((2, 3)):
            standard = np.stack([overfit_curve(t, RISE * s / STRONG) for s in shift[:, k, -1]])
            if variant == "standard":
                shape = standard[size_of]
            else:
                own = np.where(shift[:, k, j - 1, None] == 0, standard, monotone_curve(t))
                shape = own[size_of]
            noisy = shape + ar1(rng, (len(keys), CURVE_EPOCHS), PHI, CURVE_NOISE)
            columns[f"sae_deg{degree}"] = noisy.reshape(-1)
        long = runs.loc[runs.index.repeat(CURVE_EPOCHS)].reset_index(drop=True)
        method, b = spectrum_variants(design)[variant]
        frames.append(
            long.assign(
                epoch=np.tile(np.arange(1, CURVE_EPOCHS + 1), len(runs)),
                variant=variant,
                method=method,
                b=b,
                **columns,
            )
        )
    return {"spectrum_epochs": pd.concat(frames, ignore_index=True)}


def overfitting_evaluate(tables, design):
    variants = hashed(design)
    b_of = {v: int(spectrum_variants(design)[v][1]) for v in variants}
    return [overfitting_claim(tables["spectrum_epochs"], variants, b_of)]


# --- the synthetic experiment ---------------------------------------------------------------------

SYNTHETIC_NOISE = {"standard": 0.08, "ens": 0.05, "hashwh": 0.03}
R2 = 0.5


def synthetic_variants(design):
    out = {"standard": ("standard", np.nan)}
    out.update({m: (m, np.nan) for m in design.variants})
    out.update({f"hashwh_b{b}": ("hashwh", float(b)) for b in sorted(design.hashes)})
    return out


def synthetic_table(rng, design, levels, log=False):
    """synthetic_selected of the variants in ``levels`` ({variant: test R^2 per (n, c)})."""
    keys = [
        (n, c, draw, ds, s)
        for (n, c) in design.cells
        for draw in range(design.units)
        for ds in range(design.within)
        for s in range(design.seeds)
    ]
    frame = pd.DataFrame(keys, columns=["n", "c", "draw", "data_seed", "seed"])
    frames = []
    for variant, level in levels.items():
        method, b = synthetic_variants(design)[variant]
        value = run_values(rng, design, level, SYNTHETIC_NOISE[method]).reshape(-1)
        frames.append(
            frame.assign(
                variant=variant, method=method, b=b, test_r2=value, val_r2=value, diverged=False
            )
        )
    return {"synthetic_selected": pd.concat(frames, ignore_index=True)}


def synthetic_sd(design, a, b):
    noise = {v: SYNTHETIC_NOISE[synthetic_variants(design)[v][0]] for v in (a, b)}
    return float(np.hypot(unit_sd(noise[a], design), unit_sd(noise[b], design)))


def synthetic_hashed(design):
    return [v for v, (m, _) in synthetic_variants(design).items() if m == "hashwh"]


def beats_levels(rival):
    def levels(design, shift, log):
        out = {rival: np.full(len(design.cells), R2)}
        for j, v in enumerate(synthetic_hashed(design)):
            out[v] = R2 + shift[:, j] * synthetic_sd(design, v, rival)
        return out

    return levels


def no_improvement_levels(design, shift, log):
    """EN-S better than the standard network by the fixed margin (NO_GAIN_MARGIN) less
    ``shift`` SDs of a unit's difference."""
    margin = NO_GAIN_MARGIN
    sd = synthetic_sd(design, "ens", "standard")
    return {"standard": np.full(len(design.cells), R2), "ens": R2 + margin - shift * sd}


def _ns_cs(design):
    return sorted({n for n, _ in design.cells}), sorted({c for _, c in design.cells})


def ens_degrades_levels(design, shift, log):
    """Cells (c, step of n): EN-S's gain over the standard network falls by ``shift`` SDs of a
    unit's difference of two gains at each step of n (0 at the smallest n)."""
    ns, cs = _ns_cs(design)
    sd = np.sqrt(2) * synthetic_sd(design, "ens", "standard")
    gain = {(ns[0], c): 0.0 for c in cs}
    for k, (small, large) in enumerate(zip(ns, ns[1:])):
        for j, c in enumerate(cs):
            gain[(large, c)] = gain[(small, c)] - shift[j, k] * sd
    ens = np.array([R2 + gain[cell] for cell in design.cells])
    return {"standard": np.full(len(design.cells), R2), "ens": ens}


def larger_b_levels(design, shift, log):
    variants = synthetic_hashed(design)
    level = np.full(len(design.cells), R2)
    out = {variants[0]: level}
    for k, (small, big) in enumerate(zip(variants, variants[1:])):
        level = level + shift[:, k] * synthetic_sd(design, small, big)
        out[big] = level
    return out


# --- the real data --------------------------------------------------------------------------------

REAL_NOISE = {
    "hashwh": 0.03,
    "standard": 0.06,
    "ens": 0.05,
    "lasso": 0.02,
    "rf": 0.04,
    "xgboost": 0.05,
}
NETWORKS = ("hashwh", "standard", "ens")


def real_cells(design):
    return [(name, size) for name, sizes in design.datasets for size in sizes]


def real_table(rng, design, levels, log=False):
    """real_selected of the methods in ``levels`` ({method: test R^2 per (dataset, size)}):
    HashWH with one hash size (the one validation picked), networks with the design's
    training seeds, baselines one fit per unit."""
    frames = []
    cells = real_cells(design)
    for method, level in levels.items():
        seeds = design.seeds if method in NETWORKS else 1
        values = run_values(rng, replace_seeds(design, seeds), level, REAL_NOISE[method])
        keys = [
            (name, size, unit, seed if method in NETWORKS else -1)
            for name, size in cells
            for unit in range(design.units)
            for seed in range(seeds)
        ]
        frame = pd.DataFrame(keys, columns=["dataset", "train_size", "data_seed", "seed"])
        frames.append(
            frame.assign(
                variant=method,
                method=method,
                b=7.0 if method == "hashwh" else np.nan,
                test_r2=values.reshape(-1),
                val_r2=values.reshape(-1),
                diverged=False,
            )
        )
    return {"real_selected": pd.concat(frames, ignore_index=True)}


def replace_seeds(design, seeds):
    return replace(design, seeds=seeds)


def real_sd(design, method):
    sd = {
        m: unit_sd(REAL_NOISE[m], replace_seeds(design, design.seeds if m in NETWORKS else 1))
        for m in ("hashwh", method)
    }
    return float(np.hypot(sd["hashwh"], sd[method]))


def real_beats_levels(rival):
    def levels(design, shift, log):
        cells = len(real_cells(design))
        return {"hashwh": R2 + shift * real_sd(design, rival), rival: np.full(cells, R2)}

    return levels


def low_data_levels(design, shift, log):
    """Per dataset (cells): HashWH's gain over the standard network at its smallest train size
    ``shift`` SDs of the difference of two sizes' mean gains above its gain elsewhere (0)."""
    sd = np.sqrt(2) * real_sd(design, "standard")
    gain = [
        shift[i] * sd if size == min(sizes) else 0.0
        for i, (_, sizes) in enumerate(design.datasets)
        for size in sizes
    ]
    cells = len(real_cells(design))
    return {"hashwh": R2 + np.array(gain), "standard": np.full(cells, R2)}


# --- the ablation ---------------------------------------------------------------------------------

ABLATION_SD = 0.01  # a forest's mean gap around the true gap


def ablation_table(rng, design, shift, log=False):
    """One dataset: per forest and removal step, the amplitude order's test R^2 above the
    degree order's by ``shift`` x ABLATION_SD plus the forest's offset (the same at every
    step)."""
    steps = np.array(design.cells)
    rows = []
    for seed in range(design.units):
        gap = shift[0] * ABLATION_SD + rng.normal(0, ABLATION_SD)
        for step in [0, *steps]:
            for order in ("amplitude", "degree"):
                value = 0.9 - 0.01 * step + (gap if order == "amplitude" and step else 0.0)
                rows.append(
                    {
                        "seed": seed,
                        "step": step,
                        "order": order,
                        "removed": step,
                        "kept": 100 - step,
                        "test_r2": value,
                        "forest_test_r2": 0.9,
                    }
                )
    return {"ablation_sim": pd.DataFrame(rows)}


# --- cases ----------------------------------------------------------------------------------------


def _spectrum_case(levels_fn, design_fn=lambda d: d, spread: tuple = ()):
    def make(rng, design, shift, log):
        levels = levels_fn(design_fn(design), shift, log)
        return spectrum_table(rng, design_fn(design), levels, log, spread)

    return make


# Lognormal units whose medians are equal at the null but whose spreads differ: the arithmetic
# means differ there (the standard network's is the larger), so a test that dropped the log
# scale would find HashWH's SAE lower too often once the units are many enough (about 10).
UNEQUAL_SPREAD = (("standard", 1.5), ("hashwh", 0.3))


def _tables(table_fn, levels_fn):
    def make(rng, design, shift, log):
        return table_fn(rng, design, levels_fn(design, shift, log), log)

    return make


@dataclass(frozen=True)
class Case:
    """A claim at its least-favourable null: ``make(rng, design, shift, log)`` builds tables
    whose cells (an array of ``shape(design)``) are ``shift`` SDs in the claim's favour;
    ``evaluate(tables, design)`` returns claims, ``claim`` names the one checked. ``exact``:
    every cell is a t-test on Gaussian (or, ``log``, lognormal) units, so the rate is about
    alpha; ``share``: the share of cells the claim needs; ``needs(design)``: why the design
    cannot decide the claim (None if it can)."""

    claim: str
    experiment: str
    shape: Callable
    make: Callable
    evaluate: Callable
    exact: bool = True
    log: bool = False
    share: float = 1.0
    needs: Callable = field(default=lambda design: None)
    spread: tuple = ()  # (method, factor) of the log-scale noise, where the methods' differ
    # Why a shift of 0 is not the refuting side's null (None: it is, the boundary between
    # the two sides); such a case gets no false-"does not hold" measure.
    no_refuting_null: str | None = None

    @property
    def name(self) -> str:
        kind = "lognormal, unequal spreads" if self.spread else "lognormal"
        return self.claim + (f" ({kind})" if self.log else "")


def _spectrum_eval(tables, design):
    return spectrum_comparisons(tables)


def _needs_hashes(count):
    return lambda d: None if len(d.hashes) >= count else f"fewer than {count} HashWH hash sizes"


def _needs_variant(variant):
    return lambda d: None if variant in d.variants else f"no {variant} in this configuration"


def _sizes_hashes(d):
    return (len(d.cells), len(d.hashes))


def spectrum_cases() -> list[Case]:
    # SAE and energy shares, Gaussian and lognormal: a comparison, a threshold, a ratio.
    skewed = [
        case
        for log in (False, True)
        for case in (
            Case(
                "spectrum_lower_full_sae",
                "spectrum",
                _sizes_hashes,
                _spectrum_case(lower_full_sae_levels),
                _spectrum_eval,
                log=log,
            ),
            Case(
                "spectrum_fullwh_learns_support",
                "spectrum",
                lambda d: (len(d.cells),),
                _spectrum_case(fullwh_support_levels),
                _spectrum_eval,
                log=log,
                needs=_needs_variant("fullwh"),
            ),
            Case(
                "spectrum_standard_high_degree_energy_zero",
                "spectrum",
                lambda d: (len(d.cells),),
                _spectrum_case(energy_levels),
                _spectrum_eval,
                log=log,
            ),
        )
    ]
    return [
        *(
            Case(
                f"spectrum_learns_degree{d}",
                "spectrum",
                _sizes_hashes,
                _spectrum_case(learns_degree_levels(d)),
                _spectrum_eval,
            )
            for d in (4, 5)
        ),
        Case(
            "spectrum_regularized_better_any_size",
            "spectrum",
            lambda d: (len(d.cells), len(regularized(d)), 2),
            _spectrum_case(regularized_levels),
            _spectrum_eval,
        ),
        Case(
            "spectrum_standard_full_above_support",
            "spectrum",
            lambda d: (len(d.cells), len(regularized(d)) + 1),
            _spectrum_case(full_above_support_levels),
            _spectrum_eval,
        ),
        # TOST: the cells at 0 pass only with their own power, so upper bound only.
        Case(
            "spectrum_standard_comparable_on_support",
            "spectrum",
            lambda d: (len(comparable_design(d).cells), len(d.hashes)),
            _spectrum_case(comparable_levels, comparable_design),
            _spectrum_eval,
            exact=False,
            needs=lambda d: None if comparable_design(d).cells else "no train size 100 or 400",
        ),
        # Epochs are whole numbers and the rise statistic is not Gaussian: upper bound only.
        Case(
            "spectrum_low_degrees_learned_first",
            "spectrum",
            lambda d: (len(d.cells), 4),
            learned_first_table,
            lambda t, d: [learned_first_claim(t["spectrum_epochs"])],
            exact=False,
        ),
        Case(
            "spectrum_standard_overfits_low_degrees",
            "spectrum",
            lambda d: (len(d.cells), 2, len(d.hashes) + 1),
            overfitting_table,
            overfitting_evaluate,
            exact=False,
            needs=lambda d: None if d.seeds >= 2 else "fewer than two training seeds",
            no_refuting_null=(
                "at a shift of 0 the standard network does not rise, below the floor that "
                "refutes it: not the refuting side's null"
            ),
        ),
        Case(
            "spectrum_sae_improves_with_b",
            "spectrum",
            lambda d: (len(d.cells), len(d.hashes) - 1),
            _spectrum_case(sae_with_b_levels),
            _spectrum_eval,
            needs=_needs_hashes(2),
        ),
        Case(
            "spectrum_hashwh_best_tractable",
            "spectrum",
            lambda d: (len(d.cells), 5, len(tractable_rivals(d))),
            _spectrum_case(best_tractable_levels),
            _spectrum_eval,
            needs=_needs_variant("ens"),  # without EN-S it cannot hold, only be refuted
        ),
        *skewed,
        Case(
            "spectrum_lower_full_sae",
            "spectrum",
            _sizes_hashes,
            _spectrum_case(lower_full_sae_levels, spread=UNEQUAL_SPREAD),
            _spectrum_eval,
            log=True,
            spread=UNEQUAL_SPREAD,
        ),
    ]


def other_cases() -> list[Case]:
    def syn_hashes(d):
        return (len(d.cells), len(d.hashes))

    return [
        Case(
            "synthetic_hashwh_beats_standard",
            "synthetic",
            syn_hashes,
            _tables(synthetic_table, beats_levels("standard")),
            lambda t, d: synthetic_claims(t),
        ),
        Case(
            "synthetic_hashwh_beats_ens",
            "synthetic",
            syn_hashes,
            _tables(synthetic_table, beats_levels("ens")),
            lambda t, d: synthetic_claims(t),
            needs=_needs_variant("ens"),
        ),
        # "No significant improvement" in nearly all cells (Holm): upper bound only.
        Case(
            "synthetic_ens_no_improvement",
            "synthetic",
            lambda d: (len(d.cells),),
            _tables(synthetic_table, no_improvement_levels),
            lambda t, d: synthetic_claims(t),
            exact=False,
            share=NEARLY_ALL,
            needs=_needs_variant("ens"),
        ),
        Case(
            "synthetic_ens_degrades_with_n",
            "synthetic",
            lambda d: (len(_ns_cs(d)[1]), len(_ns_cs(d)[0]) - 1),
            _tables(synthetic_table, ens_degrades_levels),
            lambda t, d: [ens_degrades_with_n(t["synthetic_selected"])],
            needs=_needs_variant("ens"),
        ),
        Case(
            "synthetic_larger_b_better",
            "synthetic",
            lambda d: (len(d.cells), len(d.hashes) - 1),
            _tables(synthetic_table, larger_b_levels),
            lambda t, d: synthetic_claims(t),
            share=NEARLY_ALL,
            needs=_needs_hashes(2),
        ),
        *(
            Case(
                f"real_hashwh_beats_{rival}",
                "real",
                lambda d: (len(real_cells(d)),),
                _tables(real_table, real_beats_levels(rival)),
                lambda t, d: real_claims(t),
                share=NEARLY_ALL,
                needs=_needs_variant(rival),
            )
            for rival in ("standard", "ens", "lasso", "rf", "xgboost")
        ),
        # Welch's test between two train sizes is approximate: upper bound only.
        Case(
            "real_gain_largest_low_data",
            "real",
            lambda d: (len(d.datasets),),
            _tables(real_table, low_data_levels),
            lambda t, d: real_claims(t),
            exact=False,
            needs=lambda d: (
                None if all(len(s) > 1 for _, s in d.datasets) else "a dataset with one train size"
            ),
        ),
        Case(
            "ablation_amplitude_beats_degree_sim",
            "ablation",
            lambda d: (1,),
            ablation_table,
            lambda t, d: ablation_claims(t),
        ),
    ]


def cases() -> list[Case]:
    return spectrum_cases() + other_cases()


def why_skipped(case: Case, design: Design) -> str | None:
    """Why ``design`` gives ``case`` no verdict (None if it does)."""
    if design.units < MIN_UNITS:
        return f"{design.units} units per cell (a verdict needs {MIN_UNITS})"
    return case.needs(design)


# --- rates ----------------------------------------------------------------------------------------


def boundary_shift(case: Case, design: Design) -> np.ndarray:
    """The least-favourable null: every cell STRONG in favour but the boundary cells (0): one
    for an "every cell" claim; for a claim that needs ``share`` of the cells, all it needs but
    one are in favour."""
    shift = np.full(case.shape(design), STRONG)
    total = shift.size
    shift.reshape(-1)[: total - math.ceil(case.share * total) + 1] = 0.0
    return shift


@contextmanager
def without_units_needed():
    """The engine making verdicts only (``power.verdicts_only``): no "units needed" line, a
    power simulation per undecided claim and more than half of an evaluation's time, and no
    planner's moments, neither of which a verdict reads."""
    with verdicts_only():
        yield


def verdict_rate(
    case: Case, design: Design, shift, reps: int, seed: int = 0, verdict: str = HOLDS
) -> dict:
    """How often ``case``'s claim says ``verdict`` over ``reps`` seeded replications of tables
    with cells ``shift`` in its favour: rate, its binomial SE, replications, and whether any
    replication gave the claim a refuting test (``refutes``)."""
    hits, refutes = 0, False
    with without_units_needed():
        for rep in range(reps):
            rng = np.random.default_rng([seed, rep])
            tables = case.make(rng, design, shift, case.log)
            (claim,) = [c for c in case.evaluate(tables, design) if c.id == case.claim]
            if claim.verdict == SKIPPED:
                raise ValueError(f"{case.name} skipped at {design.label}: {claim.details}")
            hits += claim.verdict == verdict
            refutes = refutes or claim.p_refute is not None
    rate = hits / reps
    se = math.sqrt(max(rate * (1 - rate), 1e-12) / reps)
    return {"rate": rate, "se": se, "reps": reps, "refutes": refutes}


def holds_rate(case: Case, design: Design, shift, reps: int, seed: int = 0) -> dict:
    """``verdict_rate`` of "holds"."""
    return verdict_rate(case, design, shift, reps, seed, HOLDS)


def false_holds_rates(case_list, design_of, reps: int, seed: int = 0) -> list[dict]:
    """Per case that ``design_of(case)`` can decide: its false-"holds" rate at its
    least-favourable null (``holds_rate``) with the case and design."""
    rows = []
    for case in case_list:
        design = design_of(case)
        if why_skipped(case, design) is None:
            rate = holds_rate(case, design, boundary_shift(case, design), reps, seed)
            rows.append({"case": case, "design": design, **rate})
    return rows


# --- the refuting side ------------------------------------------------------------------------


def refuting_nulls(case: Case, design: Design) -> dict[str, np.ndarray]:
    """The refuting side's nulls (where "does not hold" is false): every cell exactly at the
    boundary (a shift of 0), and one cell at it with every other STRONG in the claim's favour.
    The refuting side is a union test (Holm over the claim's cells and parts), so at either
    "does not hold" may come out in at most about alpha of the replications."""
    one = np.full(case.shape(design), STRONG)
    one.reshape(-1)[0] = 0.0
    return {"every cell at 0": np.zeros(case.shape(design)), "one cell at 0": one}


def false_refutes_rates(case_list, design_of, reps: int, seed: int = 2) -> list[dict]:
    """Per case that ``design_of(case)`` can decide and whose shift of 0 is the refuting null,
    and per ``refuting_nulls``: its false-"does not hold" rate, with the case, design and null."""
    rows = []
    for case in case_list:
        design = design_of(case)
        if why_skipped(case, design) is not None or case.no_refuting_null:
            continue
        for null, shift in refuting_nulls(case, design).items():
            rate = verdict_rate(case, design, shift, reps, seed, FAILS)
            rows.append({"case": case, "design": design, "null": null, **rate})
    return rows


def check_refutes(rows: list[dict], alpha: float = ALPHA, checks: int = 1) -> list[str]:
    """The failures among ``false_refutes_rates`` rows: a rate above alpha + z SE (Holm over
    correlated tests is conservative, so no lower bound)."""
    failures = []
    for row in rows:
        failure = bound_failure(row["rate"], row["reps"], False, alpha, checks, "does not hold")
        if failure:
            failures.append(
                f"{row['case'].name} ({row['null']}) at {row['design'].label}: {failure}"
            )
    return failures


def power_rate(case: Case, design: Design, reps: int, seed: int = 1) -> dict:
    """How often the claim says "holds" with every cell PLANTED SDs in its favour."""
    return holds_rate(case, design, np.full(case.shape(design), PLANTED), reps, seed)


def check_rates(rows: list[dict], alpha: float = ALPHA, checks: int = 1) -> list[str]:
    """The failures among ``false_holds_rates`` rows: a rate above its bound, or, for an exact
    case, below it (``bound_failure``; ``checks``: how many such checks the caller makes)."""
    failures = []
    for row in rows:
        failure = bound_failure(row["rate"], row["reps"], row["case"].exact, alpha, checks)
        if failure:
            failures.append(f"{row['case'].name} at {row['design'].label}: {failure}")
    return failures


FAMILY_ERROR = 0.05  # the chance that a correct engine fails any check of one suite


def bound_z(checks: int) -> float:
    """The SEs a rate may stray from alpha in a suite of ``checks`` two-sided checks."""
    return max(2.0, float(norm.isf(FAMILY_ERROR / (2 * checks))))


def bound_failure(
    rate: float, reps: int, exact: bool, alpha: float = ALPHA, checks: int = 1, verdict=HOLDS
) -> str | None:
    """Why a false-"holds" ``rate`` over ``reps`` replications fails its bound, else None: above
    alpha + z SE, or for an exact test below alpha - z SE (over-conservative). z is 2 for one
    check; a suite of ``checks`` checks widens it so that a correct engine fails any of them
    with probability FAMILY_ERROR at most (Bonferroni over both sides: z = 2 for one check,
    3.4 for the 81 of test_calibration.py), else a suite of many cases fails by chance alone."""
    z = bound_z(checks)
    se = math.sqrt(alpha * (1 - alpha) / reps)
    if rate > alpha + z * se:
        return f"'{verdict}' in {rate:.1%} > {alpha + z * se:.1%} (alpha + {z:.2g} SE)"
    if exact and rate < alpha - z * se:
        return (
            f"'{verdict}' in {rate:.1%} < {alpha - z * se:.1%} (alpha - {z:.2g} SE): "
            "over-conservative"
        )
    return None


def skipped_row(case: Case, design: Design) -> dict:
    """A table row for a case ``design`` cannot decide."""
    return {"case": case, "design": design, "skipped": why_skipped(case, design)}


def refute_table_lines(rows: list[dict], alpha: float = ALPHA, checks: int = 1) -> list[str]:
    """A markdown table of ``false_refutes_rates`` rows (and ``skipped_row`` rows), each judged
    by the bound of a suite of ``checks`` checks."""
    z = bound_z(checks)
    lines = [
        "| claim | configuration: units per cell x data seeds x seeds | refuting null | "
        f"false 'does not hold' (SE) | accepted (up to alpha + {z:.2g} SE) | check |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        start = f"| {row['case'].name} | {row['design'].label} |"
        if row.get("skipped"):
            lines.append(f"{start} | no verdict: {row['skipped']} | | skipped |")
            continue
        se = math.sqrt(alpha * (1 - alpha) / row["reps"])
        check = "pass" if not check_refutes([row], alpha, checks) else "FAIL"
        side = "" if row["refutes"] else " (no refuting test came out)"
        lines.append(
            f"{start} {row['null']} | {row['rate']:.1%} ({row['se']:.1%}){side} | "
            f"{alpha + z * se:.1%} | {check} |"
        )
    return lines


def table_lines(rows: list[dict], alpha: float = ALPHA, checks: int = 1) -> list[str]:
    """A markdown table of rows (``false_holds_rates`` rows, with ``power`` where measured, and
    ``skipped_row`` rows), each judged by the bound of a suite of ``checks`` checks."""
    z = bound_z(checks)
    lines = [
        "| claim | configuration: units per cell x data seeds x seeds | false 'holds' (SE) | "
        f"accepted (alpha -/+ {z:.2g} SE) | power at the planted effect (SE) | check |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        start = f"| {row['case'].name} | {row['design'].label} |"
        if row.get("skipped"):
            lines.append(f"{start} no verdict: {row['skipped']} | | | skipped |")
            continue
        se = math.sqrt(alpha * (1 - alpha) / row["reps"])
        low = f"{max(0.0, alpha - z * se):.1%}" if row["case"].exact else "0"
        power = f"{row['power']:.1%} ({row['power_se']:.1%})" if "power" in row else ""
        check = "pass" if not check_rates([row], alpha, checks) else "FAIL"
        lines.append(
            f"{start} {row['rate']:.1%} ({row['se']:.1%}) | {low} to "
            f"{alpha + z * se:.1%} | {power} | {check} |"
        )
    return lines
