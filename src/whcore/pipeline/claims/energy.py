"""Section 3 and Appendix A (Figures 1, 3, A1, A4): the spectrum experiment's claims about
where the networks put their energy, how the energy of the low degrees develops, and how the
learned amplitudes change with b and with the train size.

Each run is judged at the end of training, as in ``claims.spectrum`` (the mean over its last
FINAL_EPOCHS epochs). Energies are right-skewed, so they are compared on the log scale: a
unit's difference is the log of the ratio of the two energies (paired over units)."""

from __future__ import annotations

import pandas as pd

from .cells import paired
from .claim import Claim, combine, paired_claim, skipped
from .scope import spectrum_cells
from .sheet import wording
from .spectrum_units import (
    FINAL_EPOCHS,
    HIGH,
    LOW,
    OFF_TARGET,
    UNITS,
    final_values,
    log_of_positive,
    unit_values,
    units_of,
    versus,
)

# The low degrees of the energy claims: Figure 3's caption names them ("for low degrees (2 and
# 3)"), the degrees where it shows the standard network picking up erroneous frequencies.
LOW_DEGREES = OFF_TARGET
FIGURE3_SIZE = 200  # Figure 3 shows train size 200 ("where we reported the results for ... 200")


def energy_claims(epochs, final, hashed, b_of, names, regularized) -> list[Claim]:
    """Every claim of this module, from the spectrum experiment's per-epoch table and its
    ``unit_values`` at the end of training (``final``, computed once by the caller)."""
    return [
        hashwh_energy_allocation(final, hashed, b_of),
        regularized_energy_by_degree(final, regularized, names),
        regularized_high_energy(final, regularized, names),
        standard_low_energy_keeps_rising(epochs, final),
        larger_b_learns_high_degrees(final, hashed, b_of),
        amplitudes_improve_with_data(final),
        standard_energy_shifts_with_data(final),
    ]


def log_units(final: pd.DataFrame, variant: str, column: str) -> pd.DataFrame:
    """``units_of`` on the log scale; a unit with no positive value has no log (left out)."""
    units = units_of(final, variant, column)
    return units.assign(value=log_of_positive(units["value"]))


def log_versus(final, a: str, b: str, column: str, **labels) -> pd.DataFrame:
    """Unit pairs of log values (a's ``column``, b's): a - b is the log of their ratio."""
    return paired(log_units(final, a, column), log_units(final, b, column)).assign(**labels)


def _missing(final, columns, cid, quote, source) -> Claim | None:
    absent = [c for c in columns if c not in final.columns]
    return skipped(cid, quote, source, f"no column {', '.join(absent)}") if absent else None


def _energy_pairs(final, rivals, names, column, degrees, higher: bool) -> pd.DataFrame:
    """Pairs rival vs the standard network on log energies, oriented so that a > b is the
    claimed direction (``higher``: the rival's energy above the standard network's)."""
    frames = []
    for variant in rivals:
        for d in degrees:
            first, second = (variant, "standard") if higher else ("standard", variant)
            frames.append(
                log_versus(
                    final, first, second, column.format(d=d), method=names[variant], degree=d
                )
            )
    return pd.concat(frames, ignore_index=True)


def _more_and_less(cid, quote, test, source, final, rivals, names, low_column) -> Claim:
    """Two parts: more energy than the standard network on the high degrees, less on the low
    ones (``low_column``), each in every cell (train size x method x degree)."""
    cell = ["train_size", "method", "degree"]
    high = _energy_pairs(final, rivals, names, "energy_deg{d}", HIGH, higher=True)
    low = _energy_pairs(final, rivals, names, low_column, LOW_DEGREES, higher=False)
    more = paired_claim(
        cid,
        quote,
        test,
        source,
        high,
        cell,
        "log energy on the high degrees (regularized / standard)",
        ("regularized", "standard"),
        units=UNITS,
    )
    less = paired_claim(
        cid,
        quote,
        test,
        source,
        low,
        cell,
        "log energy on the low degrees (standard / regularized)",
        ("standard", "regularized"),
        units=UNITS,
    )
    return combine(more, less, ("more on the high degrees", "less on the low degrees"))


def hashwh_energy_allocation(final, hashed, b_of) -> Claim:
    cid = "spectrum_hashwh_energy_allocation"
    quote, test, source = wording(cid, HIGH=HIGH, LOW_DEGREES=LOW_DEGREES)
    columns = [f"energy_deg{d}" for d in HIGH] + [f"energy_deg{d}_off" for d in LOW_DEGREES]
    missing = _missing(final, columns, cid, quote, source)
    if missing:
        return missing
    names = {v: f"HashWH (b = {b_of[v]})" for v in hashed}
    return _more_and_less(cid, quote, test, source, final, hashed, names, "energy_deg{d}_off")


def regularized_energy_by_degree(final, regularized, names) -> Claim:
    cid = "spectrum_regularized_energy_by_degree"
    quote, test, source = wording(
        cid, FIGURE3_SIZE=FIGURE3_SIZE, HIGH=HIGH, LOW_DEGREES=LOW_DEGREES
    )
    columns = [f"energy_deg{d}" for d in HIGH + LOW_DEGREES]
    missing = _missing(final, columns, cid, quote, source)
    if missing:
        return missing
    shown = final[final.index.get_level_values("train_size") == FIGURE3_SIZE]
    if shown.empty:
        return skipped(cid, quote, source, f"no train size {FIGURE3_SIZE} in this configuration")
    claim = _more_and_less(cid, quote, test, source, shown, regularized, names, "energy_deg{d}")
    claim.scope = spectrum_cells(shown.reset_index())
    return claim


def regularized_high_energy(final, regularized, names) -> Claim:
    cid = "spectrum_regularized_high_energy"
    quote, test, source = wording(cid, HIGH=HIGH)
    missing = _missing(final, [f"energy_deg{d}" for d in HIGH], cid, quote, source)
    if missing:
        return missing
    pairs = _energy_pairs(final, regularized, names, "energy_deg{d}", HIGH, higher=True)
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["train_size", "method", "degree"],
        "log energy on the high degrees (regularized / standard)",
        ("regularized", "standard"),
        units=UNITS,
    )


def first_half(epochs: pd.DataFrame) -> pd.DataFrame:
    """Each run's epochs up to the middle of its training (its last epoch halved)."""
    keys = ["dataset", "variant", "train_size", "data_seed", "seed"]
    end = epochs.groupby(keys)["epoch"].transform("max")
    return epochs[epochs["epoch"] <= end // 2]


def standard_low_energy_keeps_rising(epochs, final) -> Claim:
    cid = "spectrum_standard_low_energy_keeps_rising"
    quote, test, source = wording(cid, FINAL_EPOCHS=FINAL_EPOCHS, LOW_DEGREES=LOW_DEGREES)
    missing = _missing(final, [f"energy_deg{d}" for d in LOW_DEGREES], cid, quote, source)
    if missing:
        return missing
    middle = unit_values(final_values(first_half(epochs)))
    pairs = pd.concat(
        [
            paired(
                log_units(final, "standard", f"energy_deg{d}"),
                log_units(middle, "standard", f"energy_deg{d}"),
            ).assign(degree=d)
            for d in LOW_DEGREES
        ],
        ignore_index=True,
    )
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["train_size", "degree"],
        "log energy of the standard network (end / middle of training)",
        ("end", "middle"),
        units=UNITS,
    )


def larger_b_learns_high_degrees(final, hashed, b_of) -> Claim:
    cid = "spectrum_larger_b_learns_high_degrees"
    quote, test, source = wording(cid, HIGH=HIGH)
    if len(hashed) < 2:
        return skipped(cid, quote, source, "fewer than two HashWH hash sizes")
    missing = _missing(final, [f"amp_err{d}" for d in HIGH], cid, quote, source)
    if missing:
        return missing
    steps = [
        versus(final, big, small, f"amp_err{d}", step=f"b {b_of[small]} -> {b_of[big]}", degree=d)
        for small, big in zip(hashed, hashed[1:])
        for d in HIGH
    ]
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pd.concat(steps, ignore_index=True),
        ["train_size", "step", "degree"],
        "-|amplitude - 1| (larger b - smaller b)",
        ("larger b", "smaller b"),
        units=UNITS,
    )


def across_sizes(units: pd.DataFrame) -> pd.DataFrame:
    """Pairs of each train size with the next smaller one (a: the larger), matched on the g*
    draw (column ``step``)."""
    frame = units.reset_index()
    sizes = sorted(frame["train_size"].unique())
    steps = []
    for small, large in zip(sizes, sizes[1:]):
        a = frame[frame["train_size"] == large].drop(columns="train_size")
        b = frame[frame["train_size"] == small].drop(columns="train_size")
        both = paired(a.set_index("dataset"), b.set_index("dataset"))
        steps.append(both.assign(step=f"{small} -> {large}"))
    return pd.concat(steps, ignore_index=True) if steps else pd.DataFrame()


def amplitudes_improve_with_data(final) -> Claim:
    cid = "spectrum_amplitudes_improve_with_data"
    quote, test, source = wording(cid)
    errors = sorted(c for c in final.columns if c.startswith("amp_err"))
    if not errors:
        return skipped(cid, quote, source, "no learned amplitudes recorded")
    mean_error = final.assign(amp_err=final[errors].mean(axis=1))
    variants = sorted(set(final.index.get_level_values("variant")))
    frames = [across_sizes(units_of(mean_error, v, "amp_err")).assign(method=v) for v in variants]
    pairs = pd.concat(frames, ignore_index=True)
    if pairs.empty:
        return skipped(cid, quote, source, "fewer than two train sizes")
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["method", "step"],
        "-mean |amplitude - 1| (larger - smaller train size)",
        ("larger train size", "smaller train size"),
        units=UNITS,
    )


def standard_energy_shifts_with_data(final) -> Claim:
    cid = "spectrum_standard_energy_shifts_with_data"
    quote, test, source = wording(cid, HIGH=HIGH, LOW=LOW)
    missing = _missing(final, ["log_high_share"], cid, quote, source)
    if missing:
        return missing
    pairs = across_sizes(units_of(final, "standard", "log_high_share"))
    if pairs.empty:
        return skipped(cid, quote, source, "fewer than two train sizes")
    return paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["step"],
        f"log energy(degrees {HIGH[0]}-{HIGH[1]}) / energy(degrees {LOW[0]}-{LOW[1]}) of the "
        "standard network (larger - smaller train size)",
        ("larger train size", "smaller train size"),
        units=UNITS,
    )


__all__ = ["energy_claims"]
