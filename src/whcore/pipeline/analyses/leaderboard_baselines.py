"""The leaderboard's linear baselines (``analyses.leaderboard``), as ProteinGym's supervised
leaderboard and ProteinNPT train them: One-Hot (``fit_onehot``, ``ONEHOT``: a linear layer on
the one-hot encoding of the full mutated sequence, AdamW, warm-up then cosine) and ridge
(``fit_ridge``, its penalty by leave-one-out over ``RIDGE_ALPHAS``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.arrays import varying_columns
from ...data.parsers import AMINO_ACIDS

__all__ = [
    "AMINO_ACIDS",
    "ONEHOT",
    "RIDGE_ALPHAS",
    "OneHotSettings",
    "fit_onehot",
    "fit_ridge",
    "learning_rate",
    "onehot_sequences",
]

RIDGE_ALPHAS = tuple(10.0 ** np.arange(-3, 3.5, 0.5))


@dataclass(frozen=True)
class OneHotSettings:
    """ProteinNPT's One-Hot training (``OHE_not_augmented.json`` and ``train.py``'s defaults)."""

    steps: int = 10_000
    batch: int = 64
    warmup: int = 100
    max_lr: float = 3e-4
    min_lr: float = 1e-5
    weight_decay: float = 5e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    clip: float = 1.0


ONEHOT = OneHotSettings()


def onehot_sequences(sequences) -> np.ndarray:
    """The full-sequence one-hot encoding: (rows, length x 20) floats, residue ``a`` at
    position ``p`` (from 0) in column ``20 p + AMINO_ACIDS.index(a)``."""
    sequences = list(sequences)
    length = len(sequences[0])
    index = {a: i for i, a in enumerate(AMINO_ACIDS)}
    x = np.zeros((len(sequences), length * len(AMINO_ACIDS)))
    for row, sequence in enumerate(sequences):
        if len(sequence) != length:
            raise ValueError(
                f"mutated_sequence of row {row + 1} has {len(sequence)} residues, row 1 has "
                f"{length}. Fix: give substitutions of one target sequence"
            )
        for position, residue in enumerate(sequence):
            if residue not in index:
                raise ValueError(
                    f"mutated_sequence of row {row + 1}: {residue!r} at {position + 1} is not one "
                    f"of the 20 amino acids. Fix: leave out rows with stops or gaps"
                )
            x[row, position * len(AMINO_ACIDS) + index[residue]] = 1
    return x


def learning_rate(step: int, s: OneHotSettings = ONEHOT) -> float:
    """The learning rate of training step ``step`` (from 1): linear warm-up, then cosine."""
    if step <= s.warmup:
        return s.max_lr * step / s.warmup
    progress = (step - s.warmup) / (s.steps - s.warmup)
    return s.min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (s.max_lr - s.min_lr)


def _batches(rows: int, s: OneHotSettings, rng: np.random.Generator):
    """Batches of row indices for ``s.steps`` steps: shuffled epochs, the last batch of an
    epoch shorter (a data loader with shuffling, no rows dropped)."""
    while True:
        order = rng.permutation(rows)
        for start in range(0, rows, s.batch):
            yield order[start : start + s.batch]


def fit_onehot(x, y, x_test, seed: int, s: OneHotSettings = ONEHOT) -> np.ndarray:
    """Train the One-Hot linear model on (x, y) (y standardized) and predict ``x_test``.

    The seed's stream draws the initial weights, then the bias, then the batches. Columns that
    are 0 in every row (train and test) never move a prediction and get no gradient: they are
    left out. Columns that are 1 in every row (the residues no row mutates) all get the bias's
    gradient, so their Adam states are equal and their weights move alike: their sum, the only
    thing a prediction sees, is trained as one parameter whose step is their number times one
    weight's step (exactly the full model, at a fraction of its cost)."""
    x, x_test = np.asarray(x, dtype=np.float64), np.asarray(x_test, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    both = np.vstack([x, x_test])
    ones, varying = both.min(axis=0) == 1, both.min(axis=0) != both.max(axis=0)
    rng = np.random.default_rng(seed)
    bound = 1 / math.sqrt(x.shape[1])  # PyTorch's nn.Linear initialization
    weights, bias = rng.uniform(-bound, bound, x.shape[1]), rng.uniform(-bound, bound, 1)
    # parameters: varying weights, the sum of the constant weights, the bias
    params = [weights[varying], np.array([weights[ones].sum()]), bias]
    copies = [1, int(ones.sum()), 1]  # how many weights each entry stands for
    decay = [s.weight_decay, s.weight_decay, 0.0]  # weights decay, the bias does not
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    x = x[:, varying]
    batches = _batches(len(y), s, rng)
    for step in range(1, s.steps + 1):
        rows = next(batches)
        residual = x[rows] @ params[0] + params[1] + params[2] - y[rows]
        common = np.array([2 * residual.mean()])  # the bias's and every constant weight's
        grads = [2 * residual @ x[rows] / len(rows), common, common]
        norm = math.sqrt(sum(c * float((g**2).sum()) for c, g in zip(copies, grads, strict=True)))
        scale = min(1.0, s.clip / (norm + 1e-6))
        lr = learning_rate(step, s)
        for p, g, m, v, wd, c in zip(params, grads, first, second, decay, copies, strict=True):
            g = g * scale
            p *= 1 - lr * wd  # decoupled weight decay, before the Adam step (AdamW)
            m[:] = s.betas[0] * m + (1 - s.betas[0]) * g
            v[:] = s.betas[1] * v + (1 - s.betas[1]) * g**2
            m_hat = m / (1 - s.betas[0] ** step)
            v_hat = v / (1 - s.betas[1] ** step)
            p -= c * lr * m_hat / (np.sqrt(v_hat) + s.eps)
    return x_test[:, varying] @ params[0] + params[1] + params[2]


def fit_ridge(x, y, x_test, seed: int) -> np.ndarray:
    """Ridge on (x, y), its penalty chosen by leave-one-out over ``RIDGE_ALPHAS``. On the
    columns that vary over x, each distinct row of ``x_test`` predicted once: the same ridge
    (a column constant over x gets weight 0), without the rounding that would otherwise tell
    apart rows that differ only there."""
    from sklearn.linear_model import RidgeCV

    del seed  # deterministic
    fitted = varying_columns(x)
    model = RidgeCV(alphas=RIDGE_ALPHAS).fit(np.asarray(x)[:, fitted], y)
    distinct, inverse = np.unique(np.asarray(x_test)[:, fitted], axis=0, return_inverse=True)
    return model.predict(distinct)[inverse.reshape(-1)]
