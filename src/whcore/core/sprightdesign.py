"""SPRIGHT's sampling design (``whcore.core.spright``): the hashing matrices and delays of
its stages, drawn from a seed, and the points a function is sampled at."""

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

__all__ = ["STAGES", "SprightDesign", "design", "sample_values"]

STAGES = 3


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
