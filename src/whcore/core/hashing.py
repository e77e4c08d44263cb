"""HashWH: hashing a function's Walsh-Hadamard spectrum into 2^b buckets.

For sigma in {0,1}^{n x b}, evaluating g on the 2^b points ``(sigma @ bits(t)) mod 2`` of the
subspace spanned by sigma's columns and taking the WHT gives (paper, eq. hash_sum)

    (H_b g(X))_j / 2^b = U_sigma(j) = sum over f with sigma^T f = j of G(f),

so ``mean |H_b g(X)| = sum_j |U_sigma(j)|``: the L1 norm of the hashed coefficients. This is
exactly the scaling of the reference implementation, so the paper's lambda grids carry over.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .wht import fwht

__all__ = [
    "sample_sigma",
    "hashed_inputs",
    "XorDoubling",
    "hashwh_penalty",
    "fullwh_penalty",
    "check_binary",
]


def check_binary(x: torch.Tensor, what: str) -> None:
    """Raise a ValueError naming ``what`` unless every entry of ``x`` is 0 or 1."""
    if x.numel() and not bool(((x == 0) | (x == 1)).all()):
        bad = x[(x != 0) & (x != 1)].flatten()[:3].tolist()
        raise ValueError(f"{what} must contain only 0 and 1; found values such as {bad}")


def sample_sigma(
    n: int,
    b: int,
    generator: torch.Generator | None = None,
    device=None,
    batch_shape: tuple[int, ...] = (),
) -> torch.Tensor:
    """A uniform hashing matrix in {0,1}^{n x b} (i.i.d. Bernoulli(1/2)) as uint8; with
    ``batch_shape`` a stack of them, e.g. ``(S,)`` for the S members of a stacked ``MLP``."""
    _check_dims(n, b, fix="choose b <= n (the order is sample_sigma(n, b))")
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(
                f"generator must be a torch.Generator, got {_type_name(generator)}; pass "
                "torch.Generator().manual_seed(seed) (or None for torch's global one)"
            )
        device = generator.device
    return torch.randint(
        0, 2, (*batch_shape, n, b), generator=generator, device=device, dtype=torch.uint8
    )


def _type_name(value) -> str:
    """``int``, ``numpy.ndarray``, ``numpy.random.Generator``: a type as its users write it
    (its module's public part)."""
    kind = type(value)
    module = [part for part in kind.__module__.split(".") if not part.startswith("_")]
    return ".".join([*module, kind.__qualname__]) if module != ["builtins"] else kind.__qualname__


def _check_dims(n: int, b: int, fix: str) -> None:
    if b < 1:
        raise ValueError(f"the hash size b must be >= 1, got b = {b}")
    if b > n:
        raise ValueError(f"the hash size b = {b} exceeds the input dimension n = {n}; {fix}")


def hashed_inputs(sigma: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """Rows ``(sigma @ bits(t)) mod 2`` for t = 0..2^b-1 (bits MSB-first): shape (..., 2^b, n).

    Built by XOR doubling: the 2^k points spanned by the last k columns are extended by the
    next column to the left, which becomes the new most significant bit. O(n 2^b) work and
    memory, no matrix product and nothing of size 4^b.
    """
    if sigma.dim() < 2:
        raise ValueError(f"sigma must have shape (..., n, b), got {tuple(sigma.shape)}")
    n, b = sigma.shape[-2], sigma.shape[-1]
    # A hashing matrix never has more columns than rows: such a sigma is the transpose of one.
    _check_dims(
        n,
        b,
        fix=f"sigma has shape {tuple(sigma.shape)}: is it (b, n)? it must be (n, b): pass sigma.T",
    )
    check_binary(sigma, "sigma")
    points = torch.zeros(*sigma.shape[:-2], 2**b, n, dtype=torch.uint8, device=sigma.device)
    columns = sigma.to(torch.uint8).transpose(-1, -2).contiguous()  # (..., b, n)
    return XorDoubling(columns, points)().to(dtype)


class XorDoubling:
    """In-place XOR doubling between two fixed buffers, for use every training step.

    ``columns``: sigma's columns as rows, 0/1 values of shape (..., b, n) (contiguous rows:
    a strided column makes each operation several times slower); ``out``: shape (..., 2^b, n),
    any dtype that holds 0 and 1, row 0 zero. Calling the object refills ``out`` from the
    current contents of ``columns``: b element-wise operations on the device (``a != c`` is
    ``a XOR c`` on 0/1 values), on views prepared once, no allocation and no check
    (``hashed_inputs`` checks).
    """

    def __init__(self, columns: torch.Tensor, out: torch.Tensor):
        b = columns.shape[-2]
        if out.shape[-2:] != (2**b, columns.shape[-1]):
            raise ValueError(
                f"out must have shape (..., {2**b}, {columns.shape[-1]}), got {tuple(out.shape)}"
            )
        self.out = out
        self.steps = []
        size = 1
        for j in range(b - 1, -1, -1):  # column j becomes bit b-1-j of the point index
            self.steps.append(
                (out[..., :size, :], columns[..., j : j + 1, :], out[..., size : 2 * size, :])
            )
            size *= 2

    def __call__(self) -> torch.Tensor:
        for points, column, new in self.steps:
            torch.ne(points, column, out=new)
        return self.out


def _values(f: Callable, x: torch.Tensor) -> torch.Tensor:
    """f(x) with a trailing singleton output dimension removed."""
    y = f(x)
    if not isinstance(y, torch.Tensor):  # a NumPy result has no gradient to regularize
        raise TypeError(
            f"the function must return a torch.Tensor, got {_type_name(y)}; compute it with "
            "torch operations (a torch.nn.Module, say)"
        )
    if y.dim() == x.dim() and y.shape[-1] == 1:
        y = y.squeeze(-1)
    if y.shape != x.shape[:-1]:
        raise ValueError(
            f"the function must map inputs of shape {tuple(x.shape)} to shape "
            f"{tuple(x.shape[:-1])} (or with a trailing 1), got {tuple(y.shape)}"
        )
    return y


def hashwh_penalty(f: Callable, sigma: torch.Tensor) -> torch.Tensor:
    """``mean |H_b f(hashed_inputs(sigma))|`` = L1 norm of the hashed Fourier coefficients.

    ``sigma`` of shape (n, b) gives a scalar; a batch (..., n, b) gives one penalty per matrix
    (f then receives (..., 2^b, n), e.g. one sigma per member of a stacked model).
    """
    _check_members(f, sigma)
    x = hashed_inputs(sigma, dtype=_param_dtype(f))
    return fwht(_values(f, x)).abs().mean(-1)


def _check_members(f, sigma: torch.Tensor) -> None:
    """A stacked model (``n_members``, as ``MLP``) evaluates member s on the s-th matrix of a
    batch of sigmas: the batch holds one per member (a lone member also takes one (n, b))."""
    members = getattr(f, "n_members", None)
    batch = tuple(sigma.shape[:-2])
    if members is None or batch == (members,) or (members == 1 and batch == ()):
        return
    if members == 1:
        raise ValueError(
            f"sigma of shape {tuple(sigma.shape)} does not fit a model of one member; "
            "pass one (n, b) matrix"
        )
    raise ValueError(
        f"sigma of shape {tuple(sigma.shape)} does not fit a model of {members} stacked "
        f"members; pass one (n, b) matrix per member, shape ({members}, n, b): "
        f"sample_sigma(n, b, generator, batch_shape=({members},))"
    )


def fullwh_penalty(f: Callable, n: int, inputs: torch.Tensor | None = None) -> torch.Tensor:
    """``mean |2^{-n/2} H_n f(all 2^n inputs)|`` = 2^{-n/2} ||G||_1 (the reference's EN scaling).

    ``inputs`` may pass a cached ``all_inputs(n)`` (optionally with leading batch dimensions).
    """
    from .wht import all_inputs

    if inputs is None:
        inputs = all_inputs(n, dtype=_param_dtype(f), device=_param_device(f))
    return fwht(_values(f, inputs), normalize=True).abs().mean(-1)


def _param_dtype(f) -> torch.dtype:
    params = list(f.parameters()) if hasattr(f, "parameters") else []
    return params[0].dtype if params else torch.get_default_dtype()


def _param_device(f):
    params = list(f.parameters()) if hasattr(f, "parameters") else []
    return params[0].device if params else None
