"""Fast Walsh-Hadamard transform (natural / Sylvester order) and Boolean-cube helpers.

Conventions (shared by the whole library):
- ``H_m[i, j] = (-1)^<bits(i), bits(j)>`` with ``bits`` MSB-first, the Sylvester matrix that
  ``scipy.linalg.hadamard`` also builds.
- A function g on {0,1}^n is the vector of its values on ``all_inputs(n)`` (row t is bits(t));
  its Fourier coefficients are ``G = 2^-n H_n g``, so ``g(x) = sum_f G(f) (-1)^<f, x>``.
- A frequency is an integer whose bit n-1-i is f_i (MSB-first), the same index as in ``fwht``.
"""

from __future__ import annotations

import torch

__all__ = [
    "fwht",
    "butterflies",
    "hadamard_matrix",
    "all_inputs",
    "int_to_bits",
    "bits_to_int",
    "degree",
    "degrees",
    "log2_length",
]


def log2_length(length: int) -> int:
    """m such that length == 2^m, or a ValueError that says what is wrong."""
    if length < 1 or length & (length - 1):
        raise ValueError(f"the transformed dimension must have length 2^m, got {length}")
    return length.bit_length() - 1


def butterflies(x: torch.Tensor) -> torch.Tensor:
    """Unnormalized H_m x over the last dimension, m radix-2 butterfly passes of O(2^m) each.

    The textbook radix-2 transform: what ``fwht`` runs in float64 (its sums cancel exactly),
    and the yardstick its float32 path (products of small Hadamard factors) is measured
    against. Any batch shape; the last dimension must have length 2^m.
    """
    shape = x.shape
    length = shape[-1]
    m = log2_length(length)
    y = x.reshape(-1, length)
    rows = y.shape[0]
    h = 1
    for _ in range(m):
        # Pairs (i, i + h) inside blocks of 2h: (a, b) -> (a + b, a - b).
        y = y.view(rows, length // (2 * h), 2, h)
        a, b = y[:, :, 0, :], y[:, :, 1, :]
        y = torch.stack((a + b, a - b), dim=2)
        h *= 2
    return y.reshape(shape)


RADIX_BITS = 7  # largest Hadamard factor: 2^7 x 2^7 (64 KiB in float32)
_FACTORS: dict = {}  # (k, dtype, device) -> H_k, built once


def _factor(k: int, dtype, device) -> torch.Tensor:
    key = (k, dtype, device)
    h = _FACTORS.get(key)
    if h is None:
        h = _FACTORS[key] = hadamard_matrix(k, dtype=dtype, device=device)
    return h


def _radix_split(m: int) -> list[int]:
    """m bits cut into ceil(m / RADIX_BITS) nearly equal chunks (MSB chunk first)."""
    count = -(-m // RADIX_BITS)
    base, extra = divmod(m, count)
    return [base + (i < extra) for i in range(count)]


def _kronecker(x: torch.Tensor) -> torch.Tensor:
    """Unnormalized H_m x over the last dimension via H_m = H_k1 (x) H_k2 (x) ... (k_i <= 7).

    Viewing a row as a tensor with one axis of length 2^k_i per chunk, H_m applies H_k_i along
    every axis: one batched matrix product per chunk (1 for m <= 7, 2 for m <= 14) instead of m
    butterfly passes. Work O(2^m sum_i 2^k_i), memory O(2^m) per row (factors at most 128 x 128,
    cached); the same sums as the butterflies, grouped into small dense blocks that BLAS runs
    fast, and few operations (per-operation overhead dominates at the sizes HashWH uses).
    """
    shape = x.shape
    length = shape[-1]
    m = log2_length(length)
    if m == 0:
        return x.clone()
    chunks = _radix_split(m)
    k = chunks[-1]  # least significant chunk: rows of length 2^k times H_k
    y = torch.matmul(x.reshape(-1, 2**k), _factor(k, x.dtype, x.device))
    inner = 2**k
    for k in reversed(chunks[:-1]):  # then each more significant axis: H_k @ (.., 2^k, inner)
        y = torch.matmul(_factor(k, x.dtype, x.device), y.reshape(-1, 2**k, inner))
        inner *= 2**k
    return y.reshape(shape)


def _cuda_kernel():
    """``fast_hadamard_transform.hadamard_transform`` when installed (and not disabled with
    WHCORE_FWHT=torch), else None."""
    global _CUDA_KERNEL
    if _CUDA_KERNEL is False:
        import os

        _CUDA_KERNEL = None
        if os.environ.get("WHCORE_FWHT", "auto") != "torch":
            try:
                from fast_hadamard_transform import hadamard_transform as _CUDA_KERNEL
            except (ImportError, OSError, RuntimeError):  # absent, or built for another torch
                _CUDA_KERNEL = None
    return _CUDA_KERNEL


_CUDA_KERNEL = False  # not looked up yet


def fwht(x: torch.Tensor, normalize: bool = False) -> torch.Tensor:
    """Walsh-Hadamard transform of ``x`` over its last dimension (length 2^m), any batch shape.

    ``normalize=False`` gives ``H_m x``; ``normalize=True`` the orthonormal ``2^{-m/2} H_m x``.
    O(2^m) extra memory per row, differentiable, CPU or CUDA. In float32 (training) a product
    of small Hadamard factors (radix-2^k butterflies with k <= 7, see ``_kronecker``), in
    float64 the radix-2 butterflies (``butterflies``, O(m 2^m)); on CUDA the fused
    kernel of the ``fast_hadamard_transform`` package is used when it is installed (float32/16,
    m <= 15; ``WHCORE_FWHT=torch`` turns it off).
    """
    if not torch.is_tensor(x):
        raise TypeError(f"fwht expects a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"fwht expects a floating-point tensor, got dtype {x.dtype}")
    if x.dim() == 0:
        raise ValueError("fwht needs at least one dimension")
    m = log2_length(x.shape[-1])
    scale = 2.0 ** (-m / 2) if normalize else 1.0
    if x.is_cuda and 3 <= m <= 15 and x.dtype != torch.float64:
        kernel = _cuda_kernel()
        if kernel is not None:  # fused CUDA kernel (Dao-AILab), differentiable, same order
            return kernel(x.contiguous(), scale)
    # Plain differentiable operations: autograd's backward is the same transform of the
    # incoming gradient (H is symmetric), with no custom Function's per-call overhead.
    # float64 (exact spectra, SPRIGHT, analysis) keeps the radix-2 butterflies: their sums
    # cancel exactly where the BLAS blocks of the Kronecker products leave 1e-17 residues.
    y = butterflies(x) if x.dtype == torch.float64 else _kronecker(x)
    return y * scale if scale != 1.0 else y


def hadamard_matrix(m: int, normalize: bool = False, dtype=torch.float64, device=None):
    """The dense 2^m x 2^m Sylvester Hadamard matrix (the slow exact reference)."""
    if m < 0:
        raise ValueError(f"m must be >= 0, got {m}")
    # Sylvester's recursion H_{k+1} = [[H_k, H_k], [H_k, -H_k]], i.e. repeated Kronecker products.
    h1 = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=dtype, device=device)
    h = torch.ones(1, 1, dtype=dtype, device=device)
    for _ in range(m):
        h = torch.kron(h, h1)
    return h * 2.0 ** (-m / 2) if normalize else h


def int_to_bits(values: torch.Tensor, n: int) -> torch.Tensor:
    """Integers -> their n bits MSB-first (last dimension n), as int64 0/1."""
    values = torch.as_tensor(values)
    shifts = torch.arange(n - 1, -1, -1, device=values.device)
    return (values.unsqueeze(-1) >> shifts) & 1


def bits_to_int(bits: torch.Tensor) -> torch.Tensor:
    """0/1 tensor with n bits in the last dimension (MSB-first) -> int64 integers (n <= 62)."""
    bits = torch.as_tensor(bits)
    n = bits.shape[-1]
    if n > 62:
        raise ValueError(f"cannot pack {n} bits into an int64; use at most 62")
    weights = 2 ** torch.arange(n - 1, -1, -1, device=bits.device)
    return (bits.long() * weights).sum(-1)


def all_inputs(n: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """The 2^n x n matrix of all points of {0,1}^n, row t = bits(t) MSB-first."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return int_to_bits(torch.arange(2**n, device=device), n).to(dtype)


def degree(frequencies: torch.Tensor) -> torch.Tensor:
    """Hamming weight (popcount) of non-negative integer frequencies."""
    f = torch.as_tensor(frequencies).long().clone()
    count = torch.zeros_like(f)
    while bool((f > 0).any()):
        count += f & 1
        f >>= 1
    return count


def degrees(n: int, device=None) -> torch.Tensor:
    """Degree of every frequency 0..2^n-1 in natural order."""
    return degree(torch.arange(2**n, device=device))
