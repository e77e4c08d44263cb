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
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

from .bits import pack, parity
from .hashing import hashed_inputs
from .rng import derive_seed, random_bits
from .wht import fwht

__all__ = ["STAGES", "Recovery", "SprightDesign", "decode", "design", "sample_values", "sparse_wht"]

STAGES = 3
# Coefficients below this fraction of the largest bin amplitude count as numerical zero; it keeps
# the noiseless tests free of floating-point dust without hiding anything of practical size.
RELATIVE_FLOOR = 1e-6


def _check_sizes(n: int, m: int, d: int, stages: int) -> None:
    if n < 1:
        raise ValueError(f"SPRIGHT: the input dimension n must be >= 1, got n = {n}")
    if not 1 <= m <= n:
        raise ValueError(f"SPRIGHT: the hash size m must satisfy 1 <= m <= n = {n}, got m = {m}")
    if d < 1:
        raise ValueError(f"SPRIGHT: the number of delay pairs per bit d must be >= 1, got d = {d}")
    if stages < 1:
        raise ValueError(f"SPRIGHT: the number of stages must be >= 1, got {stages}")


def _gf2_rank(rows: np.ndarray) -> int:
    """Rank over GF(2) of a small 0/1 matrix (Gaussian elimination; m rows at most)."""
    rows = rows.copy()
    rank = 0
    for col in range(rows.shape[1]):
        pivots = np.nonzero(rows[rank:, col])[0]
        if len(pivots) == 0:
            continue
        p = rank + pivots[0]
        rows[[rank, p]] = rows[[p, rank]]
        others = rows[:, col].astype(bool)
        others[rank] = False
        rows[others] ^= rows[rank]
        rank += 1
        if rank == len(rows):
            break
    return rank


def _full_rank_hash(n: int, m: int, seed: int) -> np.ndarray:
    """A uniform A in {0,1}^{m x n} conditioned on rank m: a rank-deficient A would leave bins
    empty forever and crowd the others (likely only when n is close to m)."""
    offset = 0
    while True:
        a = random_bits(m, n, seed, offset)
        if _gf2_rank(a) == m:
            return a
        offset += m


def _draw(n: int, m: int, d: int, seed: int, stages: int) -> tuple[np.ndarray, np.ndarray]:
    """Hashing matrices (C, m, n) and delays (C, P, n), platform-stable from the seed."""
    base = derive_seed("spright", n, m, d, stages, seed)
    hashes = np.stack([_full_rank_hash(n, m, derive_seed(base, "hash", c)) for c in range(stages)])
    a = random_bits(stages * n * d, n, derive_seed(base, "delays")).reshape(stages, n, d, 1, n)
    flip = np.eye(n, dtype=np.uint8)[None, :, None, None, :]  # e_q for the pair of bit q
    pairs = np.concatenate((a, a ^ flip), axis=3).reshape(stages, 2 * n * d, n)
    zero = np.zeros((stages, 1, n), dtype=np.uint8)
    return hashes, np.concatenate((zero, pairs), axis=1)


def _locations(hashes: np.ndarray, delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique sample points (|U|, n) and, for every (stage, l, delay), its row in them."""
    n = hashes.shape[2]
    # Stage c's subspace {A_c^T l}: the HashWH point set with sigma = A_c^T (same l order).
    sigma = torch.from_numpy(hashes).transpose(1, 2)
    base = hashed_inputs(sigma, dtype=torch.uint8).numpy()  # (C, B, n)
    # XOR in packed form: 8x less memory than bit rows (544k samples at n = 236, m = 7).
    packed = np.packbits(base, axis=-1)[:, :, None, :] ^ np.packbits(delays, axis=-1)[:, None]
    width = packed.shape[-1]
    rows = np.ascontiguousarray(packed.reshape(-1, width))
    keys = rows.view(np.dtype((np.void, width))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    points = np.unpackbits(rows[first], axis=1, count=n)
    return points, inverse.reshape(packed.shape[:3])


@dataclass(frozen=True)
class SprightDesign:
    """The sampling design: built once from (n, m, d, seed, stages) and reused (e.g. every
    epoch of EN-S). Equal parameters give an equal design on every platform.

    ``points``: the unique sample locations, (|U|, n) uint8, sorted; ``inverse[c, l, p]``: the
    row of ``points`` holding stage c's sample at bin input l and delay p.
    """

    n: int
    m: int
    d: int = 3
    seed: int = 0
    stages: int = STAGES
    hashes: np.ndarray = field(init=False, repr=False, compare=False)  # (C, m, n)
    delays: np.ndarray = field(init=False, repr=False, compare=False)  # (C, P, n)
    points: np.ndarray = field(init=False, repr=False, compare=False)  # (|U|, n)
    inverse: np.ndarray = field(init=False, repr=False, compare=False)  # (C, 2^m, P)

    def __post_init__(self):
        _check_sizes(self.n, self.m, self.d, self.stages)
        hashes, delays = _draw(self.n, self.m, self.d, self.seed, self.stages)
        points, inverse = _locations(hashes, delays)
        arrays = {
            "hashes": hashes,
            "delays": delays,
            "points": points,
            "inverse": inverse,
            "_hash_words": pack(hashes),
            "_delay_words": pack(delays),
        }
        for name, value in arrays.items():
            object.__setattr__(self, name, value)

    @property
    def bins(self) -> int:
        return 2**self.m

    @property
    def n_delays(self) -> int:
        return 2 * self.n * self.d + 1

    @property
    def n_samples(self) -> int:
        """Samples before de-duplication: C 2^m (2 n d + 1)."""
        return self.stages * self.bins * self.n_delays

    def bin_of(self, stage: int, bits: np.ndarray) -> np.ndarray:
        """Bin index A_c k (as an MSB-first int) of frequencies given as (K, n) bit rows."""
        words = pack(bits)[:, None, :] & self._hash_words[stage][None]
        hashed = parity(words, axis=-1).astype(np.int64)  # (K, m)
        return hashed @ (1 << np.arange(self.m - 1, -1, -1))

    def signatures(self, stage: int, bits: np.ndarray) -> np.ndarray:
        """(K, P) signs (-1)^<d_p, k> of frequencies (K, n) under stage c's delays."""
        words = pack(bits)[:, None, :] & self._delay_words[stage][None]
        return 1.0 - 2.0 * parity(words, axis=-1)

    def observations(self, values: np.ndarray) -> np.ndarray:
        """Bin readings U (C, 2^m, P) from the function's values at ``points``."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(self.points),):
            raise ValueError(
                f"SPRIGHT: expected one value per sample location, shape ({len(self.points)},), "
                f"got {values.shape}"
            )
        grid = torch.from_numpy(values[self.inverse].transpose(0, 2, 1).copy())  # (C, P, B)
        return (fwht(grid) / self.bins).numpy().transpose(0, 2, 1).copy()

    def synthesize(self, bits: np.ndarray, coefs: np.ndarray) -> np.ndarray:
        """Values at ``points`` of sum_k coefs_k (-1)^<k, x>: scatter the spectrum into bins
        and invert each stage's FWHT, O(C P 2^m m) instead of O(|U| n K)."""
        readings = np.zeros((self.stages, self.bins, self.n_delays))
        for c in range(self.stages):
            contrib = coefs[:, None] * self.signatures(c, bits)
            np.add.at(readings[c], self.bin_of(c, bits), contrib)
        grid = fwht(torch.from_numpy(readings.transpose(0, 2, 1).copy())).numpy()
        values = np.empty(len(self.points))
        values[self.inverse] = grid.transpose(0, 2, 1)  # duplicates carry equal values
        return values


@lru_cache(maxsize=4)
def design(n: int, m: int, d: int = 3, seed: int = 0, stages: int = STAGES) -> SprightDesign:
    """The (cached) design for these parameters."""
    return SprightDesign(n, m, d, seed, stages)


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


def sample_values(f: Callable, des: SprightDesign) -> np.ndarray:
    """f at the design's points as float64. f receives the (N, n) points as a uint8 NumPy
    array, or, when f is a torch module, as a float tensor on its parameters' device and dtype."""
    x = des.points
    if isinstance(f, torch.nn.Module):
        param = next(f.parameters(), None)
        dtype = param.dtype if param is not None else torch.get_default_dtype()
        with torch.no_grad():
            y = f(torch.as_tensor(x, dtype=dtype, device=None if param is None else param.device))
    else:
        y = f(x)
    y = y.detach().cpu().double().numpy() if torch.is_tensor(y) else np.asarray(y, np.float64)
    if y.shape == (len(x), 1):
        y = y[:, 0]
    if y.shape != (len(x),):
        raise ValueError(
            f"SPRIGHT: the sample function must map ({len(x)}, {des.n}) inputs to "
            f"shape ({len(x)},) or ({len(x)}, 1), got {y.shape}"
        )
    return y


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
