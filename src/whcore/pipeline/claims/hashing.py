"""Appendix B: the hashing lemma, checked by simulating whcore's own hashing (uniform sigma,
bucket sigma^T f mod 2) on random sets of k distinct non-zero frequencies. Seeded, so the
same numbers every run; each check allows 3 standard errors of the simulation."""

from __future__ import annotations

import numpy as np
import torch

from ...core.hashing import sample_sigma
from ...core.rng import StableRandom, derive_seed
from .claim import Claim
from .levels import FAILS, HOLDS
from .sheet import wording

N = 20  # input dimension of the simulated frequencies
SETTINGS = [(k, b) for k in (10, 50) for b in (4, 6, 8)]  # (frequencies, hash size)
ROUNDS = 4000  # hashing matrices per setting
SLACK = 3.0  # allowed distance from the formula, in standard errors of the simulation


def _frequencies(k: int, seed: int) -> torch.Tensor:
    """k distinct non-zero frequencies of {0,1}^N."""
    codes = StableRandom(derive_seed("lemma frequencies", k, seed)).sample(2**N - 1, k) + 1
    bits = (codes[:, None] >> np.arange(N - 1, -1, -1)) & 1
    return torch.as_tensor(bits, dtype=torch.float64)


def simulate(k: int, b: int, rounds: int = ROUNDS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per round (one fresh sigma): the number of ordered colliding pairs i != j (the lemma's
    C) and whether frequency 1 collides with any other."""
    generator = torch.Generator().manual_seed(derive_seed("lemma sigma", k, b, seed))
    sigma = sample_sigma(N, b, generator, batch_shape=(rounds,)).to(torch.float64)
    buckets = (_frequencies(k, seed) @ sigma) % 2  # (rounds, k, b)
    codes = (buckets * 2 ** torch.arange(b - 1, -1, -1, dtype=torch.float64)).sum(-1)
    same = codes[:, :, None] == codes[:, None, :]
    pairs = same.sum((1, 2)) - k
    first = same[:, 0, 1:].any(-1)
    return pairs.numpy().astype(float), first.numpy().astype(float)


def hashing_claims(tables=None, settings=None) -> list[Claim]:
    rows = []
    for k, b in SETTINGS:
        pairs, first = simulate(k, b)
        rows.append(
            (
                k,
                b,
                pairs.mean(),
                pairs.std(ddof=1) / np.sqrt(len(pairs)),
                first.mean(),
                first.std(ddof=1) / np.sqrt(len(first)),
            )
        )
    units = f"{ROUNDS} hashing matrices per (k, b), k in {{10, 50}}, b in {{4, 6, 8}}, n = {N}"
    return [_count_claim(rows, units), _linear_claim(rows, units), _bound_claim(rows, units)]


def _count_claim(rows, units) -> Claim:
    quote, test, source = wording("hashing_collision_count")
    off = [(k, b, m, se) for k, b, m, se, _, _ in rows if abs(m - (k - 1) ** 2 / 2**b) > SLACK * se]
    exact = all(abs(m - k * (k - 1) / 2**b) <= SLACK * se for k, b, m, se, _, _ in rows)
    effect = "; ".join(
        f"k = {k}, b = {b}: {m:.3f} ± {se:.3f} vs (k-1)^2/2^b = {(k - 1) ** 2 / 2**b:.3f}"
        for k, b, m, se, _, _ in rows
    )
    details = (
        f"outside 3 standard errors in {len(off)} of {len(rows)} settings; the simulation "
        + ("matches" if exact else "does not match")
        + " k(k-1)/2^b, the sum over the k(k-1) ordered pairs of P(collision) = 2^-b: the "
        "lemma's formula is low by a factor k/(k-1)"
    )
    return Claim(
        "hashing_collision_count",
        quote,
        test,
        source,
        FAILS if off else HOLDS,
        effect,
        "3 standard errors of the simulation",
        units,
        details,
        nature="identity",
    )


def _linear_claim(rows, units) -> Claim:
    quote, test, source = wording("hashing_collisions_linear_in_buckets")
    verdicts, effects = [], []
    for k in sorted({r[0] for r in rows}):
        scaled = [(m * 2**b, se * 2**b) for kk, b, m, se, _, _ in rows if kk == k]
        spread = max(
            abs(a - c) / np.hypot(sa, sc)
            for a, sa in scaled
            for c, sc in scaled
            if (a, sa) != (c, sc)
        )
        verdicts.append(spread <= SLACK)
        effects.append(f"k = {k}: 2^b E[C] = " + ", ".join(f"{m:.1f}" for m, _ in scaled))
    return Claim(
        "hashing_collisions_linear_in_buckets",
        quote,
        test,
        source,
        HOLDS if all(verdicts) else FAILS,
        "; ".join(effects),
        "3 standard errors of the simulation",
        units,
        nature="identity",
    )


def _bound_claim(rows, units) -> Claim:
    quote, test, source = wording("hashing_collision_bound")
    above = [(k, b) for k, b, _, _, p, se in rows if p > (k - 1) / 2**b + SLACK * se]
    effect = "; ".join(
        f"k = {k}, b = {b}: {p:.3f} vs bound {min(1.0, (k - 1) / 2**b):.3f}"
        for k, b, _, _, p, _ in rows
    )
    return Claim(
        "hashing_collision_bound",
        quote,
        test,
        source,
        FAILS if above else HOLDS,
        effect,
        "3 standard errors of the simulation",
        units,
        nature="identity",
    )
