"""Figure 5d numerics: the exact Walsh-Hadamard spectrum of the full Entacmaea landscape.

All 2^13 genotypes are measured, so the spectrum is exact: G = 2^-n H_n y (``whcore.core.wht``
convention, genotype bits MSB-first). Energy is G(f)^2. As in the authors' notebook, the 100
largest-amplitude coefficients are ranked *without* the constant term (degree 0, the mean
brightness); their notebook used the orthonormal scaling, whose energies are 2^n times these
(the fractions per degree are the same).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ...core.io import read_parquet_metadata
from ...core.wht import bits_to_int, degree, fwht
from ..runtime.provenance import provenance

__all__ = [
    "energy_by_degree",
    "landscape",
    "spectrum",
    "top_coefficients",
    "energy_tables",
]


def landscape(frame: pd.DataFrame) -> torch.Tensor:
    """y as a function on {0,1}^n: entry t is the value at the genotype whose bits (feature
    columns in order, MSB-first) spell t. Every genotype must occur exactly once."""
    bits = torch.from_numpy(frame.drop(columns="y").to_numpy(dtype=np.int64, copy=True))
    n = bits.shape[1]
    index = bits_to_int(bits)
    if len(frame) != 2**n or len(torch.unique(index)) != 2**n:
        raise ValueError(
            f"the exact spectrum needs all 2^{n} = {2**n} genotypes once each; the "
            f"table has {len(frame)} rows with {len(torch.unique(index))} distinct"
        )
    values = torch.empty(2**n, dtype=torch.float64)
    values[index] = torch.from_numpy(frame["y"].to_numpy(dtype=np.float64, copy=True))
    return values


def spectrum(frame: pd.DataFrame) -> torch.Tensor:
    """The Fourier coefficients G (length 2^n, natural order) of the landscape."""
    values = landscape(frame)
    return fwht(values) / len(values)


def top_coefficients(
    coefficients: torch.Tensor,
    top: int,
    include_constant: bool = False,
    names: list[str] | None = None,
) -> pd.DataFrame:
    """The ``top`` largest |G(f)|, ties broken by the smaller frequency index (deterministic)."""
    n = len(coefficients).bit_length() - 1
    g = coefficients.numpy()
    candidates = np.arange(len(g)) if include_constant else np.arange(1, len(g))
    order = candidates[np.lexsort((candidates, -np.abs(g[candidates])))][:top]
    bits = [format(int(f), f"0{n}b") for f in order]
    table = pd.DataFrame(
        {
            "rank": np.arange(1, len(order) + 1),
            "frequency": order,
            "bits": bits,
            "degree": degree(torch.as_tensor(order)).numpy(),
            "coefficient": g[order],
            "energy": g[order] ** 2,
        }
    )
    if names is not None:  # the features (mutations) that interact in each coefficient
        table["features"] = ["+".join(nm for nm, b in zip(names, s) if b == "1") for s in bits]
    return table


def energy_by_degree(coefficients: torch.Tensor, top: pd.DataFrame) -> pd.DataFrame:
    """Per degree: count and energy among the top coefficients and over the whole spectrum
    (the constant term counts in the whole spectrum only if it is in ``top``)."""
    n = len(coefficients).bit_length() - 1
    energy = coefficients.numpy() ** 2
    degrees = degree(torch.arange(len(energy))).numpy()
    if 0 not in top["frequency"].to_numpy():
        energy = np.where(np.arange(len(energy)) == 0, 0.0, energy)
    rows = np.arange(n + 1)
    by_degree = top.groupby("degree")["energy"]
    table = pd.DataFrame(
        {
            "degree": rows,
            "top_count": by_degree.size().reindex(rows, fill_value=0).to_numpy(),
            "top_energy": by_degree.sum().reindex(rows, fill_value=0.0).to_numpy(),
            "all_count": np.bincount(degrees, minlength=n + 1),
            "all_energy": np.bincount(degrees, weights=energy, minlength=n + 1),
        }
    )
    table["top_fraction"] = table["top_energy"] / table["top_energy"].sum()
    table["all_fraction"] = table["all_energy"] / table["all_energy"].sum()
    return table


def energy_tables(
    data: str | Path, top: int = 100, include_constant: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """From the binarized Entacmaea Parquet: the energy-per-degree table, the top
    coefficients and what both were computed from (their metadata)."""
    frame = pd.read_parquet(data)
    g = spectrum(frame)
    names = [c for c in frame.columns if c != "y"]
    best = top_coefficients(g, top, include_constant, names)
    meta = {
        "provenance": provenance(),
        "source": str(data),
        "source_sha256": read_parquet_metadata(data).get("source_sha256"),
        "n": len(names),
        "top": top,
        "include_constant": include_constant,
        "energy": "G(f)^2 with G = 2^-n H_n y (raw y, not standardized)",
    }
    return energy_by_degree(g, best), best, meta
