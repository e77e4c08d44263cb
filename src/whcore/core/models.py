"""The paper's network, n -> c n -> c n -> n -> 1, as a stack of independent members.

One ``MLP`` holds S members with weights of shape (S, in, out), so several training seeds train
as one batched model (``torch.baddbmm``); each member is initialized from its own seed exactly
as a lone ``MLP(n, width, seeds=seed)`` would be. With one member it behaves like an ordinary
network: (N, n) -> (N,).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from .footprint import layer_sizes

__all__ = ["MLP", "layer_sizes", "predict"]

# On a CPU, one layer's activations are kept to about 2^18 floats at a time so that they stay
# in cache. Evaluation without gradients goes in chunks of rows (3.4x faster than one pass over
# 13,750 rows for 20 members of width 50 on one thread); a forward pass with gradients over many
# points (a penalty's 2^b or 2^n inputs, EN-S's samples) goes in chunks of members (forward and
# backward 1.4x faster for 45 members on 1,024 points at width 100 and for 20 members on 8,192
# points at width 50: benchmarks/run.py --parts member_chunks). On a GPU, one pass (few kernels).
CPU_CHUNK_ELEMENTS = 2**18
GPU_CHUNK_ROWS = 16384


class MLP(nn.Module):
    """Stacked LeakyReLU MLPs with Xavier-uniform weights and PyTorch's default bias init.

    ``seeds``: a list of ints, one member per seed (``[0]``: one network, initialized from
    seed 0); an int s is ``[s]`` (one member from seed s, not s members); None: one member
    drawn from the global RNG.
    """

    def __init__(
        self,
        n: int,
        width: float = 10,
        seeds: int | Sequence[int] | None = None,
        negative_slope: float = 0.01,
        dtype=torch.float32,
        device=None,
    ):
        super().__init__()
        self.n = n
        self.sizes = layer_sizes(n, width)
        self.negative_slope = negative_slope
        seed_list = [seeds] if seeds is None or isinstance(seeds, int) else list(seeds)
        if not seed_list:
            raise ValueError("an MLP needs at least one member (seeds is empty)")
        self.n_members = len(seed_list)
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            self.weights.append(nn.Parameter(torch.empty(self.n_members, fan_in, fan_out)))
            self.biases.append(nn.Parameter(torch.empty(self.n_members, fan_out)))
        with torch.no_grad():
            for s, seed in enumerate(seed_list):
                gen = torch.Generator()
                gen.manual_seed(int(seed) if seed is not None else torch.seed())
                for w, bias in zip(self.weights, self.biases):
                    fan_in, fan_out = w.shape[1], w.shape[2]
                    w_bound = math.sqrt(6.0 / (fan_in + fan_out))  # Xavier uniform, gain 1
                    w[s].uniform_(-w_bound, w_bound, generator=gen)
                    b_bound = 1.0 / math.sqrt(fan_in)  # nn.Linear's default bias init
                    bias[s].uniform_(-b_bound, b_bound, generator=gen)
        self.to(dtype=dtype, device=device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, n) -> (N,) for one member, (S, N) for S members (same inputs for all);
        (S, N, n) -> (S, N): member s evaluates x[s]."""
        if x.shape[-1] != self.n:
            raise ValueError(f"expected inputs with n = {self.n} features, got {x.shape[-1]}")
        if x.dim() not in (2, 3) or (x.dim() == 3 and x.shape[0] != self.n_members):
            raise ValueError(
                f"expected inputs of shape (N, {self.n}) or ({self.n_members}, N, {self.n}) "
                f"(one block per member), got {tuple(x.shape)}"
            )
        single = x.dim() == 2
        h = x.unsqueeze(0).expand(self.n_members, -1, -1) if single else x
        chunks = self.member_chunks(h)
        if len(chunks) == 1:
            out = self._layers(h, None)
        else:
            out = torch.cat([self._layers(h[chunk], chunk) for chunk in chunks])
        return out.squeeze(0) if single and self.n_members == 1 else out

    def member_chunks(self, h: torch.Tensor) -> list[slice]:
        """Consecutive groups of members whose activations on ``h``'s points (shape (S, N, n),
        one block per member) fit the cache (CPU_CHUNK_ELEMENTS), as nearly equal in size as
        possible; one group off the CPU. ``forward`` runs one pass per group. Each member's
        arithmetic is that of one pass over all of them, up to float rounding (BLAS may block
        a product of fewer matrices differently)."""
        per_member = h.shape[1] * max(self.sizes)
        if h.device.type != "cpu" or per_member * self.n_members <= CPU_CHUNK_ELEMENTS:
            return [slice(None)]
        count = max(1, self.n_members // max(1, CPU_CHUNK_ELEMENTS // per_member))
        bounds = [round(i * self.n_members / count) for i in range(count + 1)]
        return [slice(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]

    def _layers(self, h: torch.Tensor, members: slice | None) -> torch.Tensor:
        """(S', N, n) -> (S', N) through the layers of ``members`` (None: all of them)."""
        last = len(self.weights) - 1
        for i, (w, bias) in enumerate(zip(self.weights, self.biases)):
            if members is not None:
                w, bias = w[members], bias[members]
            h = torch.baddbmm(bias.unsqueeze(1), h, w)
            if i < last:
                h = nn.functional.leaky_relu(h, self.negative_slope)
        return h.squeeze(-1)

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """``forward`` without gradients, evaluated in chunks of rows (see
        CPU_CHUNK_ELEMENTS): the same shapes, the same values."""
        rows = (
            GPU_CHUNK_ROWS
            if x.is_cuda
            else max(64, CPU_CHUNK_ELEMENTS // (self.n_members * max(self.sizes)))
        )
        with torch.no_grad():
            parts = [self(x[..., i : i + rows, :]) for i in range(0, x.shape[-2], rows)]
        return torch.cat(parts, dim=-1)


def predict(model, x: torch.Tensor) -> torch.Tensor:
    """``model(x)`` without gradients: chunked for an ``MLP``, one pass for any other module."""
    if isinstance(model, MLP):
        return model.predict(x)
    with torch.no_grad():
        return model(x)
