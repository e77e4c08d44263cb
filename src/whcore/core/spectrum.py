"""Exact Walsh-Hadamard spectra of small functions and the paper's spectral metrics.

SAE (spectral approximation error) on a frequency set S: ||G_S - G*_S||^2 / ||G*_S||^2.
Energy on S: ||G_S||^2.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .methods import MAX_EXACT_N
from .models import predict
from .wht import all_inputs, degrees, fwht

__all__ = ["MAX_EXACT_N", "dense_target_spectrum", "exact_spectrum", "sae", "spectral_metrics"]


def exact_spectrum(f: Callable, n: int, dtype=torch.float64, device=None) -> torch.Tensor:
    """G = 2^-n H_n f(all 2^n inputs), shape (2^n,) or (S, 2^n) for a stacked model."""
    if n > MAX_EXACT_N:
        raise ValueError(f"the exact spectrum needs 2^n evaluations; n = {n} exceeds {MAX_EXACT_N}")
    params = list(f.parameters()) if hasattr(f, "parameters") else []
    in_dtype = params[0].dtype if params else dtype
    device = params[0].device if params and device is None else device
    inputs = all_inputs(n, dtype=in_dtype, device=device)
    with torch.no_grad():
        values = predict(f, inputs)
        if values.dim() > 1 and values.shape[-1] == 1 and values.shape[-2] == 2**n:
            values = values.squeeze(-1)
        return fwht(values.to(dtype)) / 2**n


def dense_target_spectrum(coefficients: dict[int, float], n: int, dtype=torch.float64):
    """A sparse spectrum {frequency: coefficient} as a dense (2^n,) tensor."""
    spectrum = torch.zeros(2**n, dtype=dtype)
    for freq, coef in coefficients.items():
        spectrum[freq] += coef
    return spectrum


def sae(spectrum: torch.Tensor, target: torch.Tensor, mask: torch.Tensor | None = None):
    """||G_S - G*_S||^2 / ||G*_S||^2 over the last dimension (S = mask, default everything)."""
    diff, ref = spectrum - target, target
    if mask is not None:
        diff, ref = diff[..., mask], ref[..., mask]
    norm = (ref**2).sum(-1)
    if bool((norm == 0).any()):
        raise ValueError("SAE is undefined on a frequency set where the target is zero")
    return (diff**2).sum(-1) / norm


def spectral_metrics(spectrum: torch.Tensor, target: torch.Tensor, n: int) -> dict:
    """Per-row metrics of a (S, 2^n) spectrum against a (2^n,) target: SAE on the support and
    on everything, and per degree d (where the target has energy) SAE and energy; plus the
    learned coefficient at each target frequency (``coef_<frequency>``)."""
    deg = degrees(n, device=spectrum.device)
    support = target != 0
    out = {"sae_support": sae(spectrum, target, support), "sae_full": sae(spectrum, target)}
    for d in range(1, n + 1):
        mask = deg == d
        out[f"energy_deg{d}"] = (spectrum[..., mask] ** 2).sum(-1)
        if bool((target[mask] != 0).any()):
            out[f"sae_deg{d}"] = sae(spectrum, target, mask)
    for freq in torch.nonzero(support).flatten().tolist():
        out[f"coef_{freq}"] = spectrum[..., freq]
    return out
