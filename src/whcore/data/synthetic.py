"""Sparse synthetic targets g*(x) = (1/k) sum_i a_i (-1)^<f_i, x> and their datasets."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from math import comb
from pathlib import Path

import numpy as np

from ..core.rng import StableRandom, derive_seed, random_bits, stable_permutation

__all__ = ["SparseTarget", "degree_ladder", "random_sparse", "sample_inputs"]


@dataclass(frozen=True)
class SparseTarget:
    """A k-sparse function on {0,1}^n: frequencies as a (k, n) 0/1 array, amplitudes (k,)."""

    n: int
    frequencies: np.ndarray
    amplitudes: np.ndarray

    def __post_init__(self):
        f = np.asarray(self.frequencies)
        if f.ndim != 2 or f.shape[1] != self.n:
            raise ValueError(f"frequencies must have shape (k, {self.n}), got {f.shape}")
        if len(self.amplitudes) != len(f):
            raise ValueError("frequencies and amplitudes must have the same length")

    @property
    def k(self) -> int:
        return len(self.amplitudes)

    @property
    def degrees(self) -> np.ndarray:
        return np.asarray(self.frequencies).sum(1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """y = (1/k) sum_i a_i (-1)^<f_i, x> for the rows of a 0/1 matrix x."""
        x = np.asarray(x)
        if x.shape[-1] != self.n:
            raise ValueError(f"inputs have {x.shape[-1]} features, the target has n = {self.n}")
        parity = (x.astype(np.int64) @ np.asarray(self.frequencies, dtype=np.int64).T) % 2
        return (1 - 2 * parity) @ np.asarray(self.amplitudes, dtype=np.float64) / self.k

    def digest(self) -> str:
        """A short hex digest of the function (n, frequencies, amplitudes): what identifies a
        g* draw wherever its file lives."""
        h = hashlib.blake2b(digest_size=8)
        h.update(np.int64(self.n).tobytes())
        h.update(np.ascontiguousarray(self.frequencies, dtype=np.uint8).tobytes())
        h.update(np.ascontiguousarray(self.amplitudes, dtype="<f8").tobytes())
        return h.hexdigest()

    def coefficients(self) -> dict[int, float]:
        """{frequency as MSB-first int: coefficient of y in sum G chi units} (n <= 62)."""
        weights = 1 << np.arange(self.n - 1, -1, -1, dtype=np.int64)
        keys = (np.asarray(self.frequencies, dtype=np.int64) * weights).sum(1)
        out: dict[int, float] = {}
        for key, amp in zip(keys.tolist(), self.amplitudes):
            out[key] = out.get(key, 0.0) + float(amp) / self.k
        return out

    def to_json(self, path: str | Path) -> None:
        payload = {
            "n": self.n,
            "frequencies": np.asarray(self.frequencies).astype(int).tolist(),
            "amplitudes": np.asarray(self.amplitudes, dtype=float).tolist(),
        }
        Path(path).write_text(json.dumps(payload, indent=1))

    @classmethod
    def from_json(cls, path: str | Path) -> SparseTarget:
        try:
            payload = json.loads(Path(path).read_text())
            return cls(
                n=int(payload["n"]),
                frequencies=np.asarray(payload["frequencies"], dtype=np.uint8),
                amplitudes=np.asarray(payload["amplitudes"], dtype=np.float64),
            )
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: not a valid target file ({err})") from err


def _frequency_of_degree(rng: StableRandom, n: int, degree: int) -> np.ndarray:
    f = np.zeros(n, dtype=np.uint8)
    f[rng.sample(n, degree)] = 1
    return f


def _check(n: int, max_degree: int) -> None:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 1 <= max_degree <= n:
        raise ValueError(f"the maximum degree must be in 1..n = {n}, got {max_degree}")


def degree_ladder(n: int, max_degree: int, seed: int) -> SparseTarget:
    """One frequency of each degree 1..d, uniform among that degree, all amplitudes 1."""
    _check(n, max_degree)
    rng = StableRandom(derive_seed("degree_ladder", n, max_degree, seed))
    freqs = np.stack([_frequency_of_degree(rng, n, d) for d in range(1, max_degree + 1)])
    return SparseTarget(n, freqs, np.ones(max_degree))


def random_sparse(n: int, k: int, max_degree: int, seed: int) -> SparseTarget:
    """k distinct frequencies: degree uniform in 1..d, then uniform among that degree;
    amplitudes U[-1, 1]."""
    _check(n, max_degree)
    available = sum(comb(n, d) for d in range(1, max_degree + 1))
    if not 1 <= k <= available:
        raise ValueError(f"k must be in 1..{available} for n = {n}, d = {max_degree}; got {k}")
    rng = StableRandom(derive_seed("random_sparse", n, k, max_degree, seed))
    seen: set[bytes] = set()
    freqs = []
    while len(freqs) < k:
        f = _frequency_of_degree(rng, n, rng.integer(1, max_degree + 1))
        if f.tobytes() not in seen:
            seen.add(f.tobytes())
            freqs.append(f)
    return SparseTarget(n, np.stack(freqs), rng.uniform(-1.0, 1.0, k))


def sample_inputs(n: int, size: int, seed: int) -> np.ndarray:
    """``size`` distinct uniform points of {0,1}^n as a (size, n) uint8 matrix."""
    if n < 63 and size > 2**n:
        raise ValueError(f"cannot draw {size} distinct points from {{0,1}}^{n}")
    if n <= 20:  # enumerate the cube and take a stable random subset
        from ..core.wht import all_inputs

        order = stable_permutation(2**n, seed)[:size]
        return all_inputs(n).numpy().astype(np.uint8)[order]
    rows: list[np.ndarray] = []
    seen: set[bytes] = set()
    offset = 0
    while len(rows) < size:
        batch = random_bits(size - len(rows), n, seed, offset)
        offset += len(batch)
        for row in batch:
            key = row.tobytes()
            if key not in seen:
                seen.add(key)
                rows.append(row)
    return np.stack(rows)
