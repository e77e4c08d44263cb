"""SPRIGHT: robust sparse Walsh-Hadamard recovery (Li, Bradley, Pawar, Ramchandran 2015).

A function g(x) = sum_k G(k) (-1)^<k, x> on {0,1}^n with a sparse spectrum is sampled in C = 3
stages. Stage c has a hashing matrix A_c in {0,1}^{m x n} and P = 2 n d + 1 delays d_p (the zero
delay, then for every bit q, d pairs (a, a xor e_q) with a random). It evaluates g at
x = A_c^T l + d_p for all l in {0,1}^m, and a FWHT over l gives, for every bin j and delay p,

    U_c[j, p] = sum over k with A_c k = j of G(k) s_k[p],     s_k[p] = (-1)^<d_p, k>.

A bin with one frequency k (a singleton) reads G(k) s_k: the product of the two readings of a
pair (a, a xor e_q) is G(k)^2 (-1)^{k_q}, so its sign reveals bit q (majority vote over the d
pairs), and G(k) = <s_k, U_c[j]> / P. Each found singleton is subtracted from its bin in every
stage (peeling), which can turn multi-ton bins into singletons; peeling stops when a round finds
no new singleton. An optional least-squares refit on the union of the found frequencies uses all
C 2^m P samples.

Frequencies are handled as 0/1 bit rows (any n, MSB-first as in ``whcore.core.wht``) and returned as
Python ints whose bit n-1-i is k_i. Everything is vectorized over bins: the only Python loops run
over the C stages and over peeling rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .sprightdesign import STAGES, SprightDesign, design, sample_values

__all__ = ["STAGES", "Recovery", "SprightDesign", "decode", "design", "sample_values", "sparse_wht"]

# Coefficients below this fraction of the largest bin amplitude count as numerical zero; it keeps
# the noiseless tests free of floating-point dust without hiding anything of practical size.
RELATIVE_FLOOR = 1e-6


@dataclass
class Recovery:
    """A recovered sparse spectrum: frequencies as (K, n) bit rows, coefficients (K,)."""

    bits: np.ndarray
    coefs: np.ndarray
    rounds: int = 0  # peeling rounds that found singletons
    noise_var: float = 0.0  # per-reading noise variance used in the tests

    def as_dict(self) -> dict[int, float]:
        """{frequency as int (bit n-1-i is k_i): coefficient}."""
        n = self.bits.shape[1]
        packed = np.packbits(self.bits, axis=1)
        pad = 8 * packed.shape[1] - n
        return {
            int.from_bytes(row.tobytes(), "big") >> pad: float(c)
            for row, c in zip(packed, self.coefs)
        }


def _vote(des: SprightDesign, obs: np.ndarray) -> np.ndarray:
    """Per-bit majority vote over the d pairs (a, a xor e_q): bits (M, n) uint8."""
    m_rows = len(obs)
    prod = obs[:, 1::2].reshape(m_rows, des.n, des.d) * obs[:, 2::2].reshape(m_rows, des.n, des.d)
    margin = 2 * (prod < 0).sum(-1) - des.d  # > 0: most pairs say the bit is 1
    tie_to_one = (margin == 0) & (prod.sum(-1) < 0)  # only possible for even d
    return ((margin > 0) | tie_to_one).astype(np.uint8)


def _fit(des: SprightDesign, stage: int, obs: np.ndarray):
    """Best singleton explanation of each bin of one stage: its frequency bits, amplitude
    <s_k, U>/P and residual energy ||U - amp s_k||^2 / P."""
    bits = _vote(des, obs)
    sig = des.signatures(stage, bits)
    amp = (obs * sig).mean(1)
    # Explicit residual, not ||U||^2/P - amp^2: that difference loses all digits below
    # 1e-16 ||U||^2 and exact singletons must read as exact.
    resid = ((obs - amp[:, None] * sig) ** 2).mean(1)
    return bits, amp, resid


def _threshold(des: SprightDesign, readings: np.ndarray, noise_sd, factor: float):
    """(threshold on energy per reading, noise variance per reading). With noise_sd None the
    noise variance is estimated as the median singleton-fit residual over all bins: zero-tons and
    singletons leave only noise, and they are most bins while K is below about 1.5 2^m."""
    energy = (readings**2).mean(-1)
    floor = RELATIVE_FLOOR**2 * float(energy.max(initial=0.0))
    if noise_sd is None:
        resid = np.concatenate([_fit(des, c, readings[c])[2] for c in range(des.stages)])
        noise_var = float(np.median(resid))
    else:
        if noise_sd < 0:
            raise ValueError(f"SPRIGHT: noise_sd must be >= 0 or None, got {noise_sd}")
        noise_var = noise_sd**2 / des.bins  # a stage's FWHT averages 2^m noisy samples
    return factor * noise_var + floor, noise_var


def _singletons(des, readings, dirty, threshold):
    """Classify the dirty bins; return the singletons' (bits, amplitudes), first occurrence of
    each frequency only (one frequency can be a singleton in several stages at once)."""
    found_bits, found_amp = [], []
    for c in range(des.stages):
        bins = np.nonzero(dirty[c])[0]
        obs = readings[c, bins]
        loud = (obs**2).mean(1) > threshold  # the others are zero-tons
        bits, amp, resid = _fit(des, c, obs[loud])
        single = (resid <= threshold) & (des.bin_of(c, bits) == bins[loud])  # else multi-ton
        found_bits.append(bits[single])
        found_amp.append(amp[single])
    bits, amp = np.concatenate(found_bits), np.concatenate(found_amp)
    _, first = np.unique(_keys(bits), return_index=True)
    first.sort()
    return bits[first], amp[first]


def _keys(bits: np.ndarray) -> np.ndarray:
    """Hashable, sortable keys of (K, n) bit rows."""
    packed = np.ascontiguousarray(np.packbits(bits, axis=1))
    return packed.view(np.dtype((np.void, packed.shape[1]))).ravel()


def _subtract(des, readings, bits, amp) -> np.ndarray:
    """Peel found coefficients out of every stage in place; return the touched bins (C, B)."""
    touched = np.zeros((des.stages, des.bins), dtype=bool)
    for c in range(des.stages):
        bins = des.bin_of(c, bits)
        np.add.at(readings[c], bins, -amp[:, None] * des.signatures(c, bits))
        touched[c, bins] = True
    return touched


def _merge(bits: np.ndarray, coefs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum the coefficients of repeated frequencies (peeling is cumulative)."""
    if len(bits) == 0:
        return bits, coefs
    _, first, inverse = np.unique(_keys(bits), return_index=True, return_inverse=True)
    total = np.zeros(len(first))
    np.add.at(total, inverse, coefs)
    return bits[first], total


def _peel(des, readings, threshold, max_rounds):
    residual = readings.copy()
    dirty = np.ones((des.stages, des.bins), dtype=bool)
    all_bits, all_amp, rounds = [np.zeros((0, des.n), np.uint8)], [np.zeros(0)], 0
    while rounds < max_rounds:
        bits, amp = _singletons(des, residual, dirty, threshold)
        if len(amp) == 0:
            break
        dirty = _subtract(des, residual, bits, amp)  # only these bins can change class
        all_bits.append(bits)
        all_amp.append(amp)
        rounds += 1
    return *_merge(np.concatenate(all_bits), np.concatenate(all_amp)), rounds


def _detect_reference(des, readings):
    """The reference decoder: every non-zero bin whose voted frequency passes the hash check,
    no noise threshold, no singleton test and no peeling (least squares sets the values)."""
    found = []
    for c in range(des.stages):
        loud = np.nonzero((readings[c] ** 2).mean(1) > 0)[0]
        bits = _vote(des, readings[c, loud])
        found.append(bits[des.bin_of(c, bits) == loud])
    bits = np.concatenate(found)
    return _merge(bits, np.zeros(len(bits)))[0]


def _refit(des, readings, bits) -> np.ndarray:
    """Least squares over all C 2^m P samples on the support ``bits``, solved in the bin domain
    (each stage's FWHT is orthogonal up to a constant, so the solution is the same). The normal
    matrix only couples frequencies sharing a bin in some stage."""
    k = len(bits)
    gram, rhs = np.zeros((k, k)), np.zeros(k)
    for c in range(des.stages):
        bins, sig = des.bin_of(c, bits), des.signatures(c, bits)
        rows, cols = np.nonzero(bins[:, None] == bins[None, :])
        np.add.at(gram, (rows, cols), np.einsum("ip,ip->i", sig[rows], sig[cols]))
        rhs += (sig * readings[c, bins]).sum(1)
    gram_t, rhs_t = torch.from_numpy(gram), torch.from_numpy(rhs)
    try:  # the normal matrix is positive definite unless the columns are dependent
        return torch.linalg.solve(gram_t, rhs_t).numpy()
    except torch.linalg.LinAlgError:
        return torch.linalg.lstsq(gram_t, rhs_t[:, None], driver="gelsd").solution[:, 0].numpy()


def decode(
    des: SprightDesign,
    values: np.ndarray,
    noise_sd: float | None = None,
    factor: float = 2.0,
    refit: bool = True,
    decoder: str = "robust",
    max_rounds: int | None = None,
) -> Recovery:
    """Recover the sparse spectrum from the values at ``des.points``.

    noise_sd: standard deviation of i.i.d. noise on each sample (0 for exact values); None
        estimates it from the bins. factor: the (1 + gamma) of the zero-ton and singleton tests
        ||U||^2/P <= factor nu^2 and ||U - amp s_k||^2/P <= factor nu^2.
    refit: least squares on the found support over all samples (else the peeled amplitudes).
    decoder: "robust" (SPRIGHT paper) or "reference" (the EN-S code's detection + least squares).
    """
    if decoder not in ("robust", "reference"):
        raise ValueError(f"SPRIGHT: decoder must be 'robust' or 'reference', got {decoder!r}")
    readings = des.observations(values)
    threshold, noise_var = _threshold(des, readings, noise_sd, factor)
    if decoder == "reference":  # detection only: the values always come from least squares
        bits, rounds = _detect_reference(des, readings), 1
        coefs, refit = np.zeros(len(bits)), True
    else:
        rounds_cap = max_rounds if max_rounds is not None else des.stages * des.bins
        bits, coefs, rounds = _peel(des, readings, threshold, rounds_cap)
    if refit and len(bits):
        coefs = _refit(des, readings, bits)
    return Recovery(bits, coefs, rounds, noise_var)


def sparse_wht(
    f: Callable, n: int, m: int, d: int = 3, seed: int = 0, **options
) -> dict[int, float]:
    """Sparse WHT of f on {0,1}^n with hash size m and d delay pairs per bit.

    Returns {frequency as int, bit n-1-i = k_i (the ``fwht`` index): coefficient}, in units of
    g = sum_k G(k) (-1)^<k, x>. ``options`` go to ``decode`` (noise_sd, factor, refit, decoder).
    f gets the (N, n) sample locations (see ``sample_values``).
    """
    des = design(n, m, d, seed)
    return decode(des, sample_values(f, des), **options).as_dict()
