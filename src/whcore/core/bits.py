"""0/1 rows packed into uint64 words, and the parity of their set bits: GF(2) inner products by
AND, XOR and popcount, exact for any n and free of BLAS threads (on a busy machine tiny float
matrix products ran 30x slower). Used by the tree spectra and by SPRIGHT, in one bit order:
feature i is bit n-1-i of the number a row's words spell (word w holds bits 64w to 64w + 63),
so that for n <= 64 a row's one word is the integer it spells MSB-first."""

from __future__ import annotations

import numpy as np

__all__ = ["n_words", "pack", "parity", "popcount", "unpack"]

_POPCOUNT8 = np.array([b.bit_count() for b in range(256)], dtype=np.uint8)


def n_words(n: int) -> int:
    """The uint64 words a row of n bits takes."""
    return max(1, -(-n // 64))


def pack(bits: np.ndarray) -> np.ndarray:
    """0/1 rows (..., n) -> (..., W) uint64 words; the inverse of ``unpack``."""
    bits = np.asarray(bits)
    n = bits.shape[-1]
    padded = np.zeros((*bits.shape[:-1], 64 * n_words(n)), dtype=np.uint8)
    padded[..., :n] = bits[..., ::-1]  # feature i is bit n-1-i
    packed = np.packbits(padded, axis=-1, bitorder="little")
    return packed.view("<u8").astype(np.uint64)


def unpack(words: np.ndarray, n: int) -> np.ndarray:
    """(K, W) uint64 words -> (K, n) uint8 rows, column i = bit n-1-i (MSB-first)."""
    as_bytes = words.astype("<u8").view(np.uint8).reshape(len(words), -1)
    bits = np.unpackbits(as_bytes, axis=1, bitorder="little")  # column q = bit q of the integer
    return bits[:, n - 1 :: -1] if n else bits[:, :0]


def popcount(words: np.ndarray) -> np.ndarray:
    """The number of set bits of each row of (K, W) words (int64)."""
    as_bytes = words.astype("<u8").view(np.uint8).reshape(len(words), -1)
    return _POPCOUNT8[as_bytes].sum(axis=1, dtype=np.int64)


def parity(words: np.ndarray, axis: int | None = None) -> np.ndarray:
    """The parity (0/1, uint8) of the set bits of each uint64 word, or, along ``axis``, of all
    the words of a row (the parity of their XOR): with a row AND another, their inner product
    over GF(2)."""
    if axis is not None:
        words = np.bitwise_xor.reduce(words, axis=axis)
    if hasattr(np, "bitwise_count"):  # NumPy >= 2
        return np.bitwise_count(words) & np.uint8(1)
    as_bytes = words.astype("<u8").view(np.uint8).reshape(*words.shape, 8)
    return np.bitwise_xor.reduce(_POPCOUNT8[as_bytes] & np.uint8(1), axis=-1)
