"""ProteinGym's supervised leaderboard, reproduced on a ProteinGym-format table (``mutant``,
``mutated_sequence``, ``DMS_score``, optionally its fold columns), so that a number computed here
stands in the same table as the published ones.

What the leaderboard does, and so what this mode does (read in OATML-Markslab/ProteinGym at
bb68524: ``proteingym/merge_supervised.py``, ``performance_DMS_supervised_benchmarks.py``,
``reference_files/DMS_substitutions.csv``; and OATML-Markslab/ProteinNPT at ba50f15:
``proteinnpt/utils/cv_split.py``, ``utils/data_utils.py``, ``utils/model_utils.py``,
``baselines/model.py``, ``baselines/model_configs/OHE_not_augmented.json``,
``scripts/train.py``, ``scripts/train_subs.sh``):

- Single mutants only: an assay with multiple mutants is scored on its singles (the fold script
  keeps them before it makes folds); ``singles`` and ``multiples_left_out`` say how many.
- Folds: the file's column of the scheme where it has one, else ProteinGym's definitions
  (``whcore.data.folds.compute_folds``; a random draw is seeded, so its spread over draws is
  what a comparison with the published draw can use).
- Refit on all four training folds (no validation rows: the training script's validation set
  is off by default and the leaderboard runs leave it off); the test fold is scored once.
- Targets standardized with the training folds' mean and standard deviation (``ddof=0``, plus
  1e-10); predictions, MSE and R^2 are on that scale, and the held-out labels on it
  ("normalized targets") are pooled over the five folds.
- The statistic: one Spearman over the pooled out-of-fold predictions and their normalized
  targets (``pooled``), beside the mean over the folds of each fold's Spearman (``mean``). A
  fold whose Spearman is not finite (constant predictions) is a failed fold, counted and never
  averaged (``whcore.pipeline.analyses.proteingym.summarize_folds``).
- One-Hot (``onehot``): a linear layer with bias on the one-hot encoding of the full mutated
  sequence (20 amino acids per position), MSE loss, AdamW (betas 0.9 and 0.999, eps 1e-8,
  weight decay 5e-3 on the weights, none on the bias), batch 64 drawn by shuffled epochs,
  10,000 steps, learning rate warmed linearly to 3e-4 over 100 steps then cosine to 1e-5,
  gradient norm clipped at 1, PyTorch's default initialization of a linear layer
  (``ONEHOT``). ProteinNPT one-hot-encodes its 33-token alphabet with start and end tokens and
  trains in half precision; the extra columns are constant or always zero, so the model class
  is the same, its initial scale and decay differ slightly.
- Ridge (``ridge``): the field's linear default, on the same encoding and scale, its penalty
  chosen per training set by efficient leave-one-out over ``RIDGE_ALPHAS``.
- The project's networks (``standard``, ``hashwh``): trained by the library's loop
  (``whcore.core.training.train_grid``) on the features every binarization of this project
  gives them (``whcore.data.features.sequence_features``: at every mutated position, "position
  p is mutated" in place of the wild-type residue's column, which is 1 in almost every row,
  and one column per substitution; every feature 0 in the wild type; ``INPUTS``), on the same
  scale, each fit on the columns that vary over its training rows (``varying_columns``: a
  held-out single's substitution, which no training single has, would otherwise meet a weight
  still at its random start). A refit has no
  validation rows to stop on, so its settings are chosen first: a seeded 20% of the four
  training folds validates (``whcore.data.folds.validation_split``, the whole-table protocol's
  split), the grid (``NETWORK_GRIDS``) trains on the other 80% with early stopping
  (``NETWORK_TRAINING``), and the configuration and epoch of the lowest validation MSE are
  selected; the network is then trained anew on all four training folds with that
  configuration for exactly that many epochs, and predicts the test fold.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import pandas as pd

from ...core.arrays import Data, varying_columns
from ...core.settings import TrainConfig
from ...data.features import sequence_features
from ...data.folds import FOLDS, compute_folds, keep_singles, validation_split
from .grids import training_groups
from .leaderboard_baselines import (
    AMINO_ACIDS,
    ONEHOT,
    RIDGE_ALPHAS,
    OneHotSettings,
    fit_onehot,
    fit_ridge,
    learning_rate,
    onehot_sequences,
)
from .proteingym import fold_scores, spearman, summarize_folds

__all__ = [
    "AMINO_ACIDS",
    "INPUTS",
    "METHODS",
    "NETWORKS",
    "NETWORK_GRIDS",
    "NETWORK_TRAINING",
    "ONEHOT",
    "RIDGE_ALPHAS",
    "OneHotSettings",
    "fit_network",
    "member_seeds",
    "fit_onehot",
    "fit_ridge",
    "learning_rate",
    "leaderboard_folds",
    "leaderboard_scores",
    "onehot_sequences",
    "out_of_fold",
    "paired_difference",
    "refit_network",
    "score_leaderboard",
    "select_network",
]

# The networks' grids (as a configuration's methods key) and training while selecting and
# refitting, where the caller gives none (the workflow's job spec always does: the dataset's
# leaderboard key over these). Small, so that the five folds of GB1 and avGFP singles train
# in minutes on a laptop's CPU.
NETWORK_GRIDS = {"standard": {}, "hashwh": {"b": [5], "lam": [0.001, 0.01, 0.1]}}
NETWORK_TRAINING = TrainConfig(
    epochs=100, batch_size=32, lr=0.001, patience=10, width=0.25, vectorize=True, device="cpu"
)
VAL_FRACTION = 0.2  # the whole-table protocol's share of the training folds that validates


def member_seeds(seed: int, ensemble: int = 1) -> list[int]:
    """The training seeds of an ensemble of ``ensemble`` networks: ``seed`` first (an ensemble of
    one is the network of before), then seeds derived from it."""
    from ...core.rng import derive_seed

    return [seed] + [derive_seed("leaderboard member", seed, k) % 2**31 for k in range(1, ensemble)]


def select_network(method: str, data: Data, seed: int, grids=None, training=None, ensemble=1):
    """(configuration, epoch, validation MSE) of the lowest validation MSE of ``method``'s grid
    trained on ``data`` with early stopping, each configuration as ``ensemble`` networks of their
    own seeds (``member_seeds``) and scored by their mean validation MSE at an epoch every one of
    them reached; epoch 0 (untrained) is never selected. None where every network diverged."""
    from ...core.training import train_grid

    grids = NETWORK_GRIDS if grids is None else grids
    training = NETWORK_TRAINING if training is None else training
    seeds = member_seeds(seed, ensemble)
    best = None
    for _, _, grid in training_groups({method: grids[method]}):
        records = train_grid(data, method, grid, seeds, training, log=lambda _: None)
        ok = records[(records["status"] == "ok") & (records["epoch"] >= 1)]
        scores = ok.groupby(["config", "epoch"], sort=False)["val_mse"].agg(["mean", "count"])
        scores = scores[scores["count"] == len(seeds)]["mean"]
        if len(scores):
            (config, epoch), mse = scores.idxmin(), float(scores.min())
            if best is None or mse < best[2]:
                best = (grid[int(config)], int(epoch), mse)
    return best


def refit_network(
    method: str, params: dict, epochs: int, x, y, x_test, seed: int, training=None, ensemble=1
) -> np.ndarray:
    """Train ``method`` with ``params`` on (x, y) for exactly ``epochs`` epochs as ``ensemble``
    networks of their own seeds (``member_seeds``) and predict ``x_test`` by their mean (NaN
    where one diverged). No row validates: the records' validation columns repeat the training
    rows and are never read."""
    import torch

    from ...core.training import train

    seeds = member_seeds(seed, ensemble)
    prediction = np.full(len(x_test), np.nan)
    # Each distinct row once: a batched forward pass gives identical rows values that differ in
    # the last bits, and a fold of identical rows (no column of theirs varies in training)
    # would be ranked by that rounding.
    distinct, inverse = np.unique(x_test, axis=0, return_inverse=True)

    def keep_last(model, epoch, members):
        if epoch == epochs:
            inputs = torch.as_tensor(
                distinct, dtype=torch.float32, device=next(model.parameters()).device
            )
            each = model.predict(inputs).reshape(len(seeds), -1).float().cpu().numpy()
            prediction[:] = each.mean(axis=0)[inverse.reshape(-1)]
        return {}

    training = NETWORK_TRAINING if training is None else training
    fixed = dataclasses.replace(training, epochs=epochs, patience=None)
    train(Data(x, y, x, y), method, params, seeds, fixed, keep_last, log=lambda _: None)
    return prediction


def fit_network(
    method: str, x, y, x_test, seed: int, grids=None, training=None, ensemble: int = 1
) -> np.ndarray:
    """Select ``method``'s configuration and epoch count on a seeded 20% of (x, y), then refit
    on all of (x, y) and predict ``x_test``, each step with ``ensemble`` networks whose
    predictions are averaged. Each fit sees the columns that vary over the rows it trains on
    (``varying_columns``): a test fold's substitutions that no training row has move no
    prediction, as they move none of ridge's."""
    x, x_test = np.asarray(x, dtype=np.float32), np.asarray(x_test, dtype=np.float32)
    fitted = varying_columns(x)
    x, x_test, y = x[:, fitted], x_test[:, fitted], np.asarray(y, dtype=np.float64)
    train, val = validation_split(np.arange(len(y)), VAL_FRACTION, seed)
    data = Data(x[train], y[train], x[val], y[val]).on_varying_columns()
    chosen = select_network(method, data, seed, grids, training, ensemble)
    if chosen is None:
        return np.full(len(x_test), np.nan)
    params, epochs, _ = chosen
    return refit_network(method, params, epochs, x, y, x_test, seed, training, ensemble)


NETWORKS = ("standard", "hashwh")  # the project's networks: selected, then refit
METHODS = {
    "onehot": fit_onehot,
    "ridge": fit_ridge,
    "standard": partial(fit_network, "standard"),
    "hashwh": partial(fit_network, "hashwh"),
}
# What a method reads: "sequence", the full-sequence one-hot (``onehot_sequences``: One-Hot as
# ProteinNPT encodes it; ridge, which is the same on either), or "mutations", the features the
# project's binarizations give the networks (``sequence_features``: 0 in the wild type).
INPUTS = {"standard": "mutations", "hashwh": "mutations"}


def _inputs(rows: pd.DataFrame, methods) -> dict[str, np.ndarray]:
    """Each method's encoding of the rows (``INPUTS``; "sequence" where it names none)."""
    kinds = {INPUTS.get(m, "sequence") for m in methods}
    encoded = {}
    if "sequence" in kinds:
        encoded["sequence"] = onehot_sequences(rows["mutated_sequence"])
    if "mutations" in kinds:
        features = sequence_features(rows["mutant"], rows["mutated_sequence"])
        encoded["mutations"] = features.to_numpy(dtype=np.float64)
    return {m: encoded[INPUTS.get(m, "sequence")] for m in methods}


def leaderboard_folds(table: pd.DataFrame, scheme: str, seed: int = 0) -> pd.DataFrame:
    """The single mutants of a ProteinGym table with their fold under ``scheme``: the file's
    column where it has one (refused unless every cell is a fold 0..4), else computed."""
    singles = table[keep_singles(table["mutant"])].reset_index(drop=True)
    if scheme in singles:
        folds = pd.to_numeric(singles[scheme], errors="coerce")
        bad = ~folds.isin(range(FOLDS))
        if bad.any():
            raise ValueError(
                f"column {scheme}: {singles[scheme][bad].iloc[0]!r} is not a fold 0..{FOLDS - 1}. "
                f"Fix: correct the cell, or drop the column to have the folds computed"
            )
        folds = folds.astype(int).to_numpy()
    else:
        folds = compute_folds(singles["mutant"], scheme, seed=seed)
    return singles.assign(fold=folds)


def _fits(methods, grids, training, ensemble: int = 1) -> dict:
    """Each method's fit; the networks' with ``grids``, ``training`` (None: the defaults) and
    ``ensemble`` networks averaged."""
    networks = {"grids": grids, "training": training, "ensemble": ensemble}
    return {m: partial(METHODS[m], **networks) if m in NETWORKS else METHODS[m] for m in methods}


def out_of_fold(
    table: pd.DataFrame,
    scheme: str,
    methods,
    seed: int = 0,
    grids=None,
    training=None,
    ensemble: int = 1,
) -> pd.DataFrame:
    """Every single mutant's held-out prediction by each method (trained on the four other
    folds, targets standardized with their mean and standard deviation) and its normalized
    target, with its fold; ``attrs`` holds the counts of rows. The networks select from
    ``grids`` (a configuration's methods key; default ``NETWORK_GRIDS``) and train with
    ``training`` (a ``TrainConfig``; default ``NETWORK_TRAINING``), each as the mean of
    ``ensemble`` networks of their own seeds."""
    rows = leaderboard_folds(table, scheme, seed)
    inputs, fits = _inputs(rows, methods), _fits(methods, grids, training, ensemble)
    y = rows["DMS_score"].to_numpy(dtype=float)
    out = rows[["mutant", "fold"]].assign(normalized_target=np.nan)
    for method in methods:
        out[method] = np.nan
    for fold in sorted(set(rows["fold"])):
        test = (rows["fold"] == fold).to_numpy()
        mean, std = y[~test].mean(), y[~test].std()
        out.loc[test, "normalized_target"] = (y[test] - mean) / (std + 1e-10)
        y_train = (y[~test] - mean) / (std + 1e-10)
        for offset, method in enumerate(methods):
            fit, x = fits[method], inputs[method]
            out.loc[test, method] = fit(x[~test], y_train, x[test], seed + 1000 * fold + offset)
    out.attrs = {
        "rows": len(table),
        "singles": len(rows),
        "multiples_left_out": len(table) - len(rows),
    }
    return out


def score_leaderboard(predictions: pd.DataFrame, methods) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per fold and method: Spearman, MSE, R^2 and the fold's train and test rows; per method:
    the pooled Spearman, MSE and R^2 over all out-of-fold rows, beside each score's mean over
    the folds, its standard error and the counts of finished and failed folds)."""
    folds = []
    for method in methods:
        for fold, part in predictions.groupby("fold", sort=True):
            scores = fold_scores(part["normalized_target"], part[method])
            test = len(part)
            folds.append(
                {
                    "method": method,
                    "fold": fold,
                    **scores,
                    "train_rows": len(predictions) - test,
                    "test_rows": test,
                }
            )
    folds = pd.DataFrame(folds)
    summary = summarize_folds(folds.assign(dataset="", scheme=""), by=("method",))
    pooled = pd.DataFrame(
        [
            {
                "method": m,
                **{
                    f"pooled_{k}": v
                    for k, v in fold_scores(
                        predictions["normalized_target"], predictions[m]
                    ).items()
                },
            }
            for m in methods
        ]
    )
    summary = pooled.merge(summary, on="method")
    summary["rows"] = len(predictions)
    return folds, summary


def paired_difference(predictions: pd.DataFrame, a: str, b: str, draws: int = 2000, seed: int = 0):
    """The pooled Spearman of method ``a`` minus that of ``b`` on the same rows, and its 95%
    interval from a paired bootstrap over the rows: (difference, low, high)."""
    y = predictions["normalized_target"].to_numpy()
    pa, pb = predictions[a].to_numpy(), predictions[b].to_numpy()
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(draws):
        rows = rng.integers(0, len(y), len(y))
        samples.append(spearman(y[rows], pa[rows]) - spearman(y[rows], pb[rows]))
    low, high = np.nanpercentile(samples, [2.5, 97.5])
    return spearman(y, pa) - spearman(y, pb), float(low), float(high)


def leaderboard_scores(
    table: pd.DataFrame, schemes, methods, seed: int = 0, grids=None, training=None, ensemble=1
) -> pd.DataFrame:
    """Per split scheme and method: ``score_leaderboard``'s summary (pooled and per-fold mean
    scores, finished and failed folds), with the scheme and the multiple mutants left out
    (``grids``, ``training`` and ``ensemble``: ``out_of_fold``'s)."""
    frames = []
    for scheme in schemes:
        predictions = out_of_fold(table, scheme, methods, seed, grids, training, ensemble)
        _, summary = score_leaderboard(predictions, methods)
        left_out = predictions.attrs["multiples_left_out"]
        frames.append(summary.assign(scheme=scheme, multiples_left_out=left_out))
    return pd.concat(frames, ignore_index=True)
