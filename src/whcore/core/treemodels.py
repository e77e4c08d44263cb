"""Fitted tree ensembles read as one table of nodes (``Nodes``): scikit-learn's regression
trees and forests and XGBoost's boosted trees, each checked to split 0/1 features (the input of
``whcore.core.trees.spectrum``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

__all__ = ["Nodes", "model_nodes"]


@dataclass
class Nodes:
    """Every tree of a model, concatenated. ``child0`` / ``child1`` is the child taken when the
    node's feature is 0 / 1 (-1 at leaves); ``value`` already includes the tree's weight."""

    n: int
    feature: np.ndarray
    child0: np.ndarray
    child1: np.ndarray
    value: np.ndarray
    offset: float = 0.0  # a constant added to the sum (XGBoost's base score)


def _check_split(ok: np.ndarray, threshold: np.ndarray, feature: np.ndarray, rule: str, what):
    bad = np.flatnonzero(~ok)
    if len(bad):
        i = bad[0]
        raise ValueError(
            f"{what}: feature {feature[i]} is split at {threshold[i]} ({rule}), which does not "
            "separate 0 from 1: the model was fit on non-binary features; the Fourier transform "
            "needs a model fit on 0/1 features"
        )


def _sklearn_nodes(trees, n: int, weight: float) -> Nodes:
    parts, base = [], 0
    for t, tree in enumerate(trees):
        tr = tree.tree_
        if tr.n_outputs != 1 or tr.value.shape[2] != 1:
            raise ValueError("only single-output regression trees are supported")
        inner = tr.children_left >= 0
        # scikit-learn sends x <= threshold left: on {0,1} that means x = 0 iff 0 <= thr < 1.
        thr = tr.threshold
        _check_split(
            ~inner | ((thr >= 0) & (thr < 1)),
            thr,
            tr.feature,
            "x <= threshold goes left",
            f"tree {t}",
        )
        shift = np.where(inner, base, 0)
        parts.append(
            (
                np.where(inner, tr.feature, -1),
                tr.children_left + shift,
                tr.children_right + shift,
                tr.value[:, 0, 0] * weight,
            )
        )
        base += tr.node_count
    return Nodes(n, *(np.concatenate(p) for p in zip(*parts)))


def _xgboost_nodes(booster, rounds: int | None) -> Nodes:
    model = json.loads(booster.save_raw("json"))["learner"]
    objective = model["objective"]["name"]
    if objective not in ("reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror"):
        raise ValueError(
            f"XGBoost objective {objective!r} has a non-identity link; the Fourier transform "
            "covers regressors whose prediction is the sum of the trees (e.g. reg:squarederror)"
        )
    params = model["learner_model_param"]
    base = [float(v) for v in params["base_score"].strip("[]").split(",")]
    if len(base) != 1 or int(params.get("num_target", 1)) > 1:
        raise ValueError("only single-target XGBoost regressors are supported")
    gbm = model["gradient_booster"]["model"]
    trees = gbm["trees"]
    if rounds is not None:  # early stopping: predict() uses the trees up to the best round
        trees = trees[: gbm["iteration_indptr"][rounds]]
    n = int(params["num_feature"])
    parts, offset = [], 0
    for t, tree in enumerate(trees):
        left, right = np.array(tree["left_children"]), np.array(tree["right_children"])
        cond = np.array(tree["split_conditions"], dtype=np.float32).astype(np.float64)
        feature = np.array(tree["split_indices"])
        inner = left >= 0
        if np.any(np.array(tree["split_type"])[inner] != 0):
            raise ValueError(f"tree {t} has categorical splits; use numeric 0/1 features")
        # XGBoost sends x < condition to "yes" (left): on {0,1} that means x = 0 iff 0 < c <= 1.
        _check_split(
            ~inner | ((cond > 0) & (cond <= 1)),
            cond,
            feature,
            "x < condition goes left",
            f"XGBoost tree {t}",
        )
        shift = np.where(inner, offset, 0)
        parts.append(
            (np.where(inner, feature, -1), left + shift, right + shift, np.where(inner, 0.0, cond))
        )  # a leaf's value is its split_condition
        offset += len(left)
    # XGBoost stores float32 leaves and base score; their float64 sum is the exact function.
    base_score = float(np.float32(base[0]))
    return Nodes(n, *(np.concatenate(p) for p in zip(*parts)), offset=base_score)


def model_nodes(model) -> Nodes:
    module = type(model).__module__
    if module.startswith("xgboost"):
        import xgboost

        if isinstance(model, xgboost.XGBModel):
            if not isinstance(model, xgboost.XGBRegressor):
                raise ValueError(f"{type(model).__name__}: only XGBoost regressors are supported")
            rounds = model.best_iteration + 1 if _early_stopped(model) else None
            return _xgboost_nodes(model.get_booster(), rounds)
        if isinstance(model, xgboost.Booster):
            return _xgboost_nodes(model, None)
    if module.startswith("sklearn"):
        from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
        from sklearn.tree import DecisionTreeRegressor

        if isinstance(model, DecisionTreeRegressor):  # also ExtraTreeRegressor
            _check_fitted(model, "tree_")
            return _sklearn_nodes([model], model.n_features_in_, 1.0)
        if isinstance(model, (RandomForestRegressor, ExtraTreesRegressor)):
            _check_fitted(model, "estimators_")
            trees = model.estimators_
            return _sklearn_nodes(trees, model.n_features_in_, 1.0 / len(trees))
    raise ValueError(
        f"cannot take the Fourier transform of a {type(model).__module__}."
        f"{type(model).__name__}: expected a fitted scikit-learn DecisionTreeRegressor, "
        "RandomForestRegressor or ExtraTreesRegressor, or an XGBoost XGBRegressor / Booster"
    )


def _early_stopped(model) -> bool:
    try:
        return model.best_iteration is not None
    except AttributeError:  # XGBoost raises this when no early stopping was used
        return False


def _check_fitted(model, attribute: str) -> None:
    if not hasattr(model, attribute):
        raise ValueError(f"the {type(model).__name__} is not fitted; call fit() first")
