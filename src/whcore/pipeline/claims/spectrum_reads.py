"""What the spectrum claims read of the per-epoch table (``spectrum_epochs``), value by value,
so that a slim crate (``crate.slim``) can keep those values and no others and still render the
same claims.

A run's value at the end of training is the mean of its last epochs, up to the longest window
of the sensitivity (``WINDOWS``); the energy claim compares it with the ``FINAL_EPOCHS`` epochs up
to the middle of training (``energy.first_half``): every value of those rows is read. The
curve-shaped claims read whole curves (``claims.dynamics``): the overfitting claim the SAE of
degrees 2 and 3 of the standard network and of HashWH at every trained epoch, the
low-degrees-first claim the amplitude of every degree of the standard network at every trained
epoch. Nothing else of the table is read: no claim reads epoch 0 or another method's curve."""

from __future__ import annotations

import pandas as pd

from .dynamics import OVERFITTING_DEGREES
from .spectrum_units import FINAL_EPOCHS, WINDOWS

__all__ = ["TABLE", "read_values"]

TABLE = "spectrum_epochs"  # the table these are the reads of (its file's stem)
CURVE_METHODS = ("standard", "hashwh")  # whose SAE curves the overfitting claim reads
LEARNED_FIRST = "standard"  # whose amplitude curves the low-degrees-first claim reads
RUN = ["dataset", "variant", "train_size", "data_seed", "seed"]
KEYS = (*RUN, "draw", "method", "b", "epoch")  # what a row is: always read


def read_values(epochs: pd.DataFrame) -> pd.DataFrame:
    """Which values of ``epochs`` the spectrum claims read: a boolean frame of its index and
    its columns but the keys (``KEYS``); a row with none read is not read at all."""
    metrics = [c for c in epochs.columns if c not in KEYS]
    readable = [c for c in metrics if c.startswith(("sae_", "energy_deg", "amp_deg"))]
    epoch = epochs["epoch"]
    end = epoch.where(epoch > 0).groupby([epochs[k] for k in RUN]).transform("max")
    middle = end // 2
    whole = (epoch > 0) & (
        (epoch > end - max(WINDOWS)) | ((epoch <= middle) & (epoch > middle - FINAL_EPOCHS))
    )
    trained = epoch > 0
    curves = [f"sae_deg{d}" for d in OVERFITTING_DEGREES]
    none = pd.Series(False, index=epochs.index)
    reads = pd.DataFrame(
        {column: whole if column in readable else none for column in metrics}, index=epochs.index
    )
    for column in curves:
        if column in reads:
            reads[column] |= trained & epochs["method"].isin(CURVE_METHODS)
    for column in [c for c in metrics if c.startswith("amp_deg")]:
        reads[column] |= trained & (epochs["variant"] == LEARNED_FIRST)
    return reads
