"""EN-S (Aghazadeh et al. 2021): ADMM between the network and a sparse spectrum from SPRIGHT.

Scaled-dual ADMM on min L_net + lam ||z||_0 subject to z = spectrum of the network, restricted to
SPRIGHT's fixed sample locations U (one set per member, from its seed):

- every minibatch: loss += lam * (rho / 2) * mean_U (f(U) - Hu + gamma)^2 (a forward and backward
  pass over all of U each step: EN-S's real cost, kept as it is);
- after each epoch: yhat = f(U); SPRIGHT on yhat + gamma; if it finds a support, Hu = the fitted
  sparse spectrum evaluated on U and gamma += yhat - Hu; if it finds nothing, nothing changes.

The records get ``fourier_time``: seconds per member of the epoch-end step (evaluating f(U),
SPRIGHT, the updates). The network-update time is ``epoch_time - fourier_time``.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from .methods import METHOD_INFO
from .models import predict
from .regularizers import Context, Regularizer, member_weight
from .rng import derive_seed
from .spright import SprightDesign, decode

__all__ = ["ENS"]


def _now(device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


class ENS(Regularizer):
    """EN-S with SPRIGHT (hash size m, d delay pairs per bit, 3 stages); see the module doc."""

    name = "ens"
    PARAMS = METHOD_INFO[name].params
    DEFAULTS = METHOD_INFO[name].defaults
    PER_MEMBER = METHOD_INFO[name].per_member
    GRAPH_SAFE = False  # its steps stay eager: SPRIGHT's many samples, not launches, set its cost

    def __init__(
        self,
        ctx: Context,
        lam: float | torch.Tensor,
        rho: float | torch.Tensor,
        m: int,
        d: int = 3,
        decoder: str = "robust",
    ):
        super().__init__(ctx, lam=lam, rho=rho, m=m, d=d, decoder=decoder)
        self.decoder = decoder
        if min(torch.as_tensor(lam).min(), torch.as_tensor(rho).min()) < 0:
            raise ValueError(f"ens: lam and rho must be >= 0, got lam = {lam}, rho = {rho}")
        if not 1 <= m <= ctx.n:
            raise ValueError(f"ens: the hash size m = {m} must satisfy 1 <= m <= n = {ctx.n}")
        if d < 1:
            raise ValueError(f"ens: d (delay pairs per bit) must be >= 1, got {d}")
        self.weight = member_weight(lam * rho / 2, ctx)
        # Members with the same seed (configurations of one stack) share one design.
        shared = {
            seed: SprightDesign(ctx.n, m, d, derive_seed(seed, "spright"))
            for seed in dict.fromkeys(ctx.seeds)
        }
        self.designs = [shared[seed] for seed in ctx.seeds]
        self.sizes = [len(des.points) for des in self.designs]
        self.points, self.mean_weights = self._stack_points()
        self.hu = torch.zeros_like(self.mean_weights)
        self.gamma = torch.zeros_like(self.mean_weights)
        self.support_sizes = [0] * len(self.designs)  # last SPRIGHT support per member

    def _stack_points(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(S, max |U|, n) locations and (S, max |U|) weights 1/|U_s| (0 on padding).

        Members' designs may de-duplicate to different sizes; padding with a copy of the
        member's first point keeps one batched forward pass and the zero weight removes it."""
        longest = max(self.sizes)
        points, weights = [], []
        for des, size in zip(self.designs, self.sizes):
            pad = np.repeat(des.points[:1], longest - size, axis=0)
            points.append(np.concatenate((des.points, pad)))
            weights.append(np.r_[np.full(size, 1.0 / size), np.zeros(longest - size)])
        to = {"dtype": self.ctx.dtype, "device": self.ctx.device}
        return (torch.as_tensor(np.stack(points), **to), torch.as_tensor(np.stack(weights), **to))

    def penalty(self, model) -> torch.Tensor:
        gap = model(self.points) - self.hu + self.gamma
        return self.weight * (self.mean_weights * gap**2).sum(-1)

    def _predict(self, model) -> np.ndarray:
        values = predict(model, self.points).reshape(len(self.designs), -1)
        return values.double().cpu().numpy()

    def on_epoch_end(self, model, epoch: int) -> dict[str, float]:
        start = _now(self.ctx.device)
        yhat = self._predict(model)
        gamma = self.gamma.double().cpu().numpy()
        hu = self.hu.double().cpu().numpy()
        for s, (des, size) in enumerate(zip(self.designs, self.sizes)):
            target = yhat[s, :size] + gamma[s, :size]
            found = decode(des, target, decoder=self.decoder)  # noise estimated from the bins
            self.support_sizes[s] = len(found.coefs)
            if len(found.coefs) == 0:
                continue
            hu[s, :size] = des.synthesize(found.bits, found.coefs)
            gamma[s, :size] = target - hu[s, :size]  # gamma + yhat - Hu
        self.hu.copy_(torch.from_numpy(hu))
        self.gamma.copy_(torch.from_numpy(gamma))
        return {"fourier_time": (_now(self.ctx.device) - start) / len(self.designs)}
