"""Platform- and version-stable randomness for data splits and samples.

NumPy does not promise that ``Generator.permutation`` keeps its stream across releases, and
torch's generators differ between CPU and CUDA. Anything that decides *which data* a run sees
is therefore derived from SplitMix64 (Steele et al. 2014), a fully specified integer hash
computed here with NumPy uint64 arithmetic: the same seed gives the same split on every
platform and library version.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["StableRandom", "derive_seed", "random_bits", "splitmix64", "stable_permutation"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MASK63 = (1 << 63) - 1


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 output function applied elementwise to uint64 values."""
    z = np.asarray(x, dtype=np.uint64) + _GOLDEN
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def derive_seed(*parts) -> int:
    """A 63-bit seed derived from any sequence of ints and strings (e.g. seed, "sigma")."""
    digest = hashlib.blake2b(repr(tuple(parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _MASK63


def _stream(seed: int, count: int, offset: int = 0) -> np.ndarray:
    counters = np.arange(offset, offset + count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return splitmix64(counters * _GOLDEN + np.uint64(derive_seed("stream", seed)))


def stable_permutation(size: int, seed: int) -> np.ndarray:
    """A permutation of range(size) that depends only on (size, seed)."""
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    return np.argsort(_stream(seed, size), kind="stable")


def random_bits(rows: int, n: int, seed: int, offset: int = 0) -> np.ndarray:
    """A (rows, n) uint8 matrix of i.i.d. fair bits, row r from stream positions of row r."""
    words_per_row = (n + 63) // 64
    words = _stream(seed, rows * words_per_row, offset * words_per_row)
    bits = np.unpackbits(words.view(np.uint8).reshape(rows, -1), axis=1, bitorder="little")
    return bits[:, :n]


class StableRandom:
    """Successive draws from one SplitMix64 stream: what NumPy's ``Generator`` offers for
    drawing an experiment (a sample without replacement, integers, uniforms), with the same
    results on every platform and NumPy version."""

    def __init__(self, seed: int):
        self.seed, self.offset = seed, 0

    def _words(self, count: int) -> np.ndarray:
        words = _stream(self.seed, count, self.offset)
        self.offset += count
        return words

    def uniform(self, low: float = 0.0, high: float = 1.0, size: int = 1) -> np.ndarray:
        """``size`` floats uniform in [low, high) (53 random bits each)."""
        unit = (self._words(size) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        return low + (high - low) * unit

    def integer(self, low: int, high: int) -> int:
        """One integer uniform in [low, high)."""
        return low + min(int(self.uniform()[0] * (high - low)), high - low - 1)

    def sample(self, population: int, size: int) -> np.ndarray:
        """``size`` distinct elements of range(population), in random order."""
        if not 0 <= size <= population:
            raise ValueError(f"cannot draw {size} distinct elements of range({population})")
        return np.argsort(self._words(population), kind="stable")[:size]
