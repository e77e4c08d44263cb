"""Spectral regularizers behind one interface.

A regularizer is built once per training job for a stacked model of S members (one per training
seed and configuration) and is then asked, every minibatch step, for one penalty term per member.
Members of one stack share the parameters that shape the computation (b, m, ...); the weights a
class lists in ``PER_MEMBER`` (lam, rho) may differ between members and are then (S,) tensors.
Methods that need work between epochs (EN-S: a sparse WHT of the network, then ADMM updates)
override ``on_epoch_end``. A subclass with a ``name`` registers itself (``METHODS``); its
method's entry in ``whcore.core.methods.METHOD_INFO`` names the module that defines it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .hashing import XorDoubling, fullwh_penalty
from .methods import METHOD_INFO
from .rng import derive_seed
from .wht import all_inputs, fwht

__all__ = ["Context", "Regularizer", "make_regularizer", "METHODS"]


@dataclass(frozen=True)
class Context:
    """What a regularizer may know about the job: input dimension, members' seeds, device."""

    n: int
    seeds: Sequence[int]
    device: torch.device
    dtype: torch.dtype = torch.float32


class Regularizer:
    """No penalty (the ``standard`` network). Subclasses set PARAMS and override the hooks."""

    name = "standard"
    PARAMS: dict[str, type] = {}  # parameter name -> type; all are required
    DEFAULTS: dict[str, object] = {}
    PER_MEMBER: tuple[str, ...] = ()  # parameters that may differ between stacked members
    # Whether a training step with this penalty may be captured as a CUDA graph and replayed:
    # the penalty's shapes are fixed, it reads no host value and draws only from the device
    # generators ``graph_generators`` names (EN-S's ADMM state changes between epochs: no).
    GRAPH_SAFE = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            METHODS[cls.name] = cls

    def __init__(self, ctx: Context, **params):
        self.ctx = ctx
        self.params = params

    def penalty(self, model) -> torch.Tensor | None:
        """The weighted penalty term, shape (S,), or None for no penalty."""
        return None

    def on_epoch_start(self, steps: int) -> None:
        """Called by the training loop before an epoch of exactly ``steps`` penalties (one per
        minibatch step): a penalty may draw the epoch's randomness at once."""

    def on_epoch_end(self, model, epoch: int) -> dict[str, float]:
        """Work between epochs; returns extra per-epoch record fields (e.g. its time)."""
        return {}

    def graph_generators(self) -> list[torch.Generator]:
        """The device generators the penalty draws from (a CUDA graph must register them)."""
        return []


METHODS: dict[str, type[Regularizer]] = {"standard": Regularizer}


def member_weight(value: float | torch.Tensor, ctx: Context) -> float | torch.Tensor:
    """A penalty weight as the penalty uses it: a float, or per-member weights (computed in
    float64, like a float) cast to the model's dtype once."""
    return value.to(ctx.dtype) if isinstance(value, torch.Tensor) else float(value)


def _generators(ctx: Context, purpose: str) -> list[torch.Generator]:
    gens = []
    for seed in ctx.seeds:
        gen = torch.Generator(device=ctx.device)
        gen.manual_seed(derive_seed(seed, purpose))
        gens.append(gen)
    return gens


class HashWH(Regularizer):
    """lam * mean_r mean |H_b f(X_b sigma_r^T mod 2)|, sigma resampled every step per member."""

    name = "hashwh"
    PARAMS = METHOD_INFO[name].params
    DEFAULTS = METHOD_INFO[name].defaults
    PER_MEMBER = METHOD_INFO[name].per_member

    def __init__(self, ctx: Context, lam: float, b: int, repetitions: int = 1):
        super().__init__(ctx, lam=lam, b=b, repetitions=repetitions)
        if not 1 <= b <= ctx.n:
            raise ValueError(f"hashwh: b = {b} must satisfy 1 <= b <= n = {ctx.n}")
        if repetitions < 1:
            raise ValueError(f"hashwh: repetitions must be >= 1, got {repetitions}")
        self.b, self.repetitions = b, repetitions
        # lam * mean over repetitions and buckets: one weight per member
        self._scale = member_weight(lam / (repetitions * 2**b), ctx)
        self.generators = _generators(ctx, "sigma")
        # Buffers allocated once and refilled every step: sigma per member and repetition, and
        # the network's inputs with the repetitions folded into the points, (S, R 2^b, n), so
        # that one forward pass serves them all. Row 0 of every subspace stays the zero input.
        members, n = len(ctx.seeds), ctx.n
        to = self._like = {"dtype": ctx.dtype, "device": ctx.device}
        self._sigma = torch.empty(members, repetitions, n, b, **to)
        self._columns = torch.empty(members, repetitions, b, n, **to)  # sigma^T, rows contiguous
        self._inputs = torch.zeros(members, repetitions * 2**b, n, **to)
        self._points = self._inputs.view(members, repetitions, 2**b, n)
        self._fill = XorDoubling(self._columns, self._points)
        # An epoch's matrices, drawn at its start (on_epoch_start), and the step that reads
        # them next, a counter on the device (a CUDA graph replays the read, not a host index).
        self._epoch: torch.Tensor | None = None  # (S, steps, R, n, b)
        self._step = torch.zeros((), dtype=torch.long, device=ctx.device)

    @property
    def sigma(self) -> torch.Tensor:
        """(S, R, n, b): the hashing matrices of the last step, in the buffer every step refills
        (a sampler of one's own may write into it: ``sample``'s contract)."""
        return self._sigma

    def graph_generators(self) -> list[torch.Generator]:
        return self.generators if self._epoch is None else []

    def on_epoch_start(self, steps: int) -> None:
        """Draw the epoch's matrices, one draw per member of all its steps at once: S draws an
        epoch instead of S a step (a stack of 500 networks replayed from a CUDA graph spent 8 ms
        a step in per-member draws, against 0.8 ms for the rest of the step on an H200). On a
        CPU a generator's stream is sequential, so these are the values of one draw per step
        (tested); on CUDA they are another, equally random, draw of the same generator."""
        shape = (steps, self.repetitions, self.ctx.n, self.b)
        if self._epoch is None or self._epoch.shape[1:] != shape:
            self._epoch = torch.empty(len(self.generators), *shape, **self._like)
        for drawn, gen in zip(self._epoch, self.generators):
            torch.randint(0, 2, shape, generator=gen, out=drawn)
        self._step.zero_()

    def sample(self) -> torch.Tensor:
        """(R, S, n, b): one fresh 0/1 hashing matrix per repetition and member, drawn from the
        member's own generator -- now, or at the epoch's start -- (a view of a buffer that the
        next call overwrites)."""
        if self._epoch is not None:
            torch.index_select(self._epoch, 1, self._step.view(1), out=self._sigma.unsqueeze(1))
            self._step.add_(1)
            return self._sigma.transpose(0, 1)
        shape = (self.repetitions, self.ctx.n, self.b)
        for sigma, gen in zip(self._sigma, self.generators):
            torch.randint(0, 2, shape, generator=gen, out=sigma)
        return self._sigma.transpose(0, 1)

    def penalty(self, model):
        """One forward pass of every member on its R 2^b hashed points (built on the device by
        XOR doubling in a reused buffer), one batched FWHT, (S,) penalties.

        The input buffer is refilled by the next call: backpropagate a penalty before asking
        for the next one (as a training step does)."""
        self.sample()
        self._columns.copy_(self._sigma.transpose(-1, -2))
        self._fill()
        values = model(self._inputs).view(self._points.shape[:-1])  # (S, R, 2^b)
        # lam * mean over repetitions and buckets of |H_b f|, as one L1 norm and one scaling
        l1 = torch.linalg.vector_norm(fwht(values), ord=1, dim=(-2, -1))
        return l1 * self._scale


class FullWH(Regularizer):
    """lam * mean |2^{-n/2} H_n f(all 2^n inputs)| (EN; exact, exponential in n)."""

    name = "fullwh"
    PARAMS = METHOD_INFO[name].params
    PER_MEMBER = METHOD_INFO[name].per_member

    def __init__(self, ctx: Context, lam: float):
        super().__init__(ctx, lam=lam)
        if ctx.n > METHOD_INFO[self.name].max_n:
            raise ValueError(
                f"fullwh evaluates the network on all 2^n inputs; n = {ctx.n} is too large "
                f"(at most {METHOD_INFO[self.name].max_n}). Use hashwh or ens for "
                "high-dimensional inputs."
            )
        self.lam = member_weight(lam, ctx)
        # Every member evaluates the same 2^n points: (S, 2^n, n).
        points = all_inputs(ctx.n, dtype=ctx.dtype, device=ctx.device)
        self.inputs = points.expand(len(ctx.seeds), -1, -1)

    def penalty(self, model):
        return self.lam * fullwh_penalty(model, self.ctx.n, inputs=self.inputs)


def make_regularizer(method: str, params: dict | Sequence[dict], ctx: Context) -> Regularizer:
    """Build a registered regularizer, checking its parameter names and types.

    ``params``: one mapping for every member, or one per member (``ctx.seeds``) for a stack of
    configurations; those may differ only in the class's ``PER_MEMBER`` parameters."""
    _load_plugins()
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}")
    cls = METHODS[method]
    if isinstance(params, dict) or params is None:
        return cls(ctx, **_checked_params(method, cls, params))
    members = [_checked_params(method, cls, p) for p in params]
    if len(members) != len(ctx.seeds):
        raise ValueError(
            f"method {method!r}: {len(members)} parameter sets for {len(ctx.seeds)} members"
        )
    shared = {k: v for k, v in members[0].items() if k not in cls.PER_MEMBER}
    differing = sorted({k for p in members for k in shared if p[k] != shared[k]})
    if differing:
        raise ValueError(
            f"method {method!r}: the members of one stacked model must share {differing}; "
            f"only {list(cls.PER_MEMBER)} may differ (train the others as separate groups)"
        )
    varying = {
        k: torch.tensor([p[k] for p in members], dtype=torch.float64, device=ctx.device)
        for k in cls.PER_MEMBER
    }
    return cls(ctx, **shared, **varying)


def _checked_params(method: str, cls: type[Regularizer], params: dict | None) -> dict:
    """The parameters with the class's defaults filled in, checked and typed."""
    params = {**cls.DEFAULTS, **(params or {})}
    unknown = sorted(set(params) - set(cls.PARAMS))
    if unknown:
        raise ValueError(
            f"method {method!r} has no parameter(s) {unknown}; it takes {sorted(cls.PARAMS)}"
        )
    missing = sorted(set(cls.PARAMS) - set(params))
    if missing:
        raise ValueError(f"method {method!r} needs parameter(s) {missing}")
    return {key: _typed(method, key, kind, params[key]) for key, kind in cls.PARAMS.items()}


def _typed(method: str, key: str, kind: type, value):
    """``value`` as the parameter's type, or a ValueError naming the method and parameter."""
    if kind is str:
        choices = METHOD_INFO[method].choices.get(key, ())
        if isinstance(value, str) and (not choices or value in choices):
            return value
        raise ValueError(
            f"method {method!r}: parameter {key} must be one of {choices}, got {value!r}"
        )
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (kind is int and float(value) != int(value))
    ):
        raise ValueError(
            f"method {method!r}: parameter {key} must be {kind.__name__}, got {value!r}"
        )
    return kind(value)


def _load_plugins() -> None:
    # Methods living in their own modules register on import.
    import importlib

    for module in sorted({info.module for info in METHOD_INFO.values()}):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
