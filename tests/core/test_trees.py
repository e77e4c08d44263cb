"""The exact Fourier transform of trees: checked against the dense WHT of the model's own
predictions on every input of {0,1}^n, and against Appendix D.1's degree and support bounds."""

import json

import numpy as np
import pytest
import torch
import xgboost
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from whcore.core import trees
from whcore.core.bits import n_words, pack, parity, unpack
from whcore.core.trees import SparseSpectrum, spectrum
from whcore.core.wht import all_inputs, fwht


def _problem(n, rows=300, seed=0):
    """Random 0/1 inputs and a target with interactions up to degree 4, plus noise."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, (rows, n)).astype(np.float64)
    signs = 1 - 2 * x
    y = signs[:, 0] + 0.7 * signs[:, 1:3].prod(1) + 0.5 * signs[:, :4].prod(1)
    return x, y + rng.normal(0, 0.3, rows)


def _dense_wht(values: np.ndarray) -> np.ndarray:
    """G = 2^-n H_n g with the library's FWHT (a path independent of whcore.core.trees)."""
    return fwht(torch.from_numpy(values)).numpy() / len(values)


def _xgb_function(model, x: np.ndarray) -> np.ndarray:
    """XGBoost's function in float64: its own traversal (pred_leaf), float32 leaf values from the
    text dump, and the base score. ``predict`` sums in float32, so it is only close to this."""
    booster = model.get_booster()
    leaves = booster.predict(xgboost.DMatrix(x), pred_leaf=True).astype(int)
    frame = booster.trees_to_dataframe()
    frame = frame[frame["Feature"] == "Leaf"]
    value = {
        (t, node): float(np.float32(v))
        for t, node, v in zip(frame["Tree"], frame["Node"], frame["Gain"])
    }
    config = json.loads(booster.save_config())["learner"]["learner_model_param"]
    base = float(np.float32(float(config["base_score"].strip("[]"))))
    return base + np.array([sum(value[(t, node)] for t, node in enumerate(row)) for row in leaves])


def _bound(node_children) -> int:
    """Appendix D.1: |supp(leaf)| = 1 and |supp(t)| <= 2 (|supp(t_left)| + |supp(t_right)|)."""
    left, right = node_children

    def walk(i):
        return 1 if left[i] < 0 else 2 * (walk(left[i]) + walk(right[i]))

    return walk(0)


def _sklearn_bound(model) -> int:
    estimators = getattr(model, "estimators_", [model])
    return sum(_bound((e.tree_.children_left, e.tree_.children_right)) for e in estimators)


def _xgb_bound(model) -> int:
    def walk(node):
        return 1 if "leaf" in node else 2 * sum(walk(c) for c in node["children"])

    return 1 + sum(walk(json.loads(t)) for t in model.get_booster().get_dump(dump_format="json"))


SKLEARN_MODELS = [
    lambda: DecisionTreeRegressor(max_depth=6, random_state=0),
    lambda: DecisionTreeRegressor(random_state=0),  # grown until the leaves are pure
    lambda: RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0),
    lambda: ExtraTreesRegressor(n_estimators=5, max_depth=4, random_state=0),
]


@pytest.mark.parametrize("n", [1, 6, 12])
@pytest.mark.parametrize("make", SKLEARN_MODELS)
def test_sklearn_transform_is_exact(n, make):
    x, y = _problem(n, seed=n)
    model = make().fit(x, y)
    inputs = all_inputs(n, dtype=torch.float64).numpy()
    values = model.predict(inputs)
    spec = spectrum(model)
    np.testing.assert_allclose(spec.to_dense(), _dense_wht(values), rtol=0, atol=1e-9)
    np.testing.assert_allclose(spec.predict(inputs), values, rtol=0, atol=1e-9)
    depth = max(e.tree_.max_depth for e in getattr(model, "estimators_", [model]))
    assert spec.degrees.max() <= depth
    assert 0 < len(spec) <= _sklearn_bound(model)
    assert np.all(np.diff(spec.frequencies) > 0)  # sorted, no duplicates


@pytest.mark.parametrize("tree_method", ["hist", "exact"])
def test_xgboost_transform_is_exact(tree_method):
    n = 10
    x, y = _problem(n, seed=3)
    model = xgboost.XGBRegressor(
        n_estimators=15, max_depth=4, learning_rate=0.3, tree_method=tree_method, n_jobs=1
    ).fit(x, y + 5.0)
    inputs = all_inputs(n, dtype=torch.float64).numpy()
    reference = _xgb_function(model, inputs)
    assert np.abs(reference - model.predict(inputs)).max() < 1e-5  # the reference is XGBoost's
    spec = spectrum(model)
    np.testing.assert_allclose(spec.to_dense(), _dense_wht(reference), rtol=0, atol=1e-9)
    np.testing.assert_allclose(spec.predict(inputs), reference, rtol=0, atol=1e-9)
    assert spec.degrees.max() <= 4
    assert len(spec) <= _xgb_bound(model)
    assert spectrum(model.get_booster()).coefficients.tolist() == spec.coefficients.tolist()


def test_xgboost_early_stopping_uses_the_best_round():
    x, y = _problem(8, seed=4)
    model = xgboost.XGBRegressor(
        n_estimators=200, max_depth=3, early_stopping_rounds=3, n_jobs=1
    ).fit(x[:200], y[:200], eval_set=[(x[200:], y[200:])], verbose=False)
    assert model.best_iteration < 199
    inputs = all_inputs(8, dtype=torch.float64).numpy()
    np.testing.assert_allclose(spectrum(model).predict(inputs), model.predict(inputs), atol=1e-5)


def test_more_than_64_features():
    """Two-word bit sets: packed frequencies become Python ints, bits stay MSB-first."""
    n = 70
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, (400, n)).astype(np.float64)
    y = x[:, 0] - 2 * x[:, 69] * x[:, 3] + x[:, 66] * x[:, 1] + rng.normal(0, 0.1, 400)
    model = RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0).fit(x, y)
    spec = spectrum(model)
    assert spec.words.shape == (len(spec), 2)
    probe = rng.integers(0, 2, (500, n))
    np.testing.assert_allclose(spec.predict(probe), model.predict(probe), rtol=0, atol=1e-9)
    bits = spec.bits()
    for f, row in zip(spec.frequencies, bits):
        assert [(f >> (n - 1 - i)) & 1 for i in range(n)] == row.tolist()
    assert {int(f).bit_length() <= n for f in spec.frequencies} == {True}
    np.testing.assert_array_equal(spec.degrees, bits.sum(1))


def _brute_force(nodes, x):
    """Follow each input down each tree (the definition of a tree)."""
    roots = [i for i in range(len(nodes.feature)) if i not in set(nodes.child0) | set(nodes.child1)]
    total = np.full(len(x), nodes.offset)
    for r, row in enumerate(x):
        for node in roots:
            while nodes.feature[node] >= 0:
                node = nodes.child1[node] if row[nodes.feature[node]] else nodes.child0[node]
            total[r] += nodes.value[node]
    return total


def test_repeated_feature_on_a_path():
    """A path testing a feature twice: redundant (same side) or unreachable (opposite sides)."""
    # node 0: x0 -> (1, 2); node 1: x0 again -> (3, 4) where 4 is unreachable;
    # node 2: x1 -> (5, 6); node 6: x0 again -> (7, 8) where 7 is unreachable.
    feature = np.array([0, 0, 1, -1, -1, -1, 0, -1, -1])
    child0 = np.array([1, 3, 5, -1, -1, -1, 7, -1, -1])
    child1 = np.array([2, 4, 6, -1, -1, -1, 8, -1, -1])
    value = np.array([0, 0, 0, 1.5, 100.0, -2.0, 0, 100.0, 3.0])
    nodes = trees.Nodes(3, feature, child0, child1, value, offset=0.25)
    inputs = all_inputs(3, dtype=torch.float64).numpy()
    spec = trees._transform(nodes, tol=1e-12)
    np.testing.assert_allclose(
        spec.predict(inputs), _brute_force(nodes, inputs.astype(int)), atol=1e-12
    )


def test_clear_errors():
    x, y = _problem(5)
    with pytest.raises(ValueError, match="cannot take the Fourier transform"):
        spectrum(LinearRegression().fit(x, y))
    with pytest.raises(ValueError, match="cannot take the Fourier transform"):
        spectrum(DecisionTreeClassifier().fit(x, y > 0))
    with pytest.raises(ValueError, match="not fitted"):
        spectrum(RandomForestRegressor())
    with pytest.raises(ValueError, match="non-binary features"):
        spectrum(DecisionTreeRegressor(max_depth=3).fit(x * 3, y))
    with pytest.raises(ValueError, match="non-binary features"):
        spectrum(xgboost.XGBRegressor(n_estimators=2, max_depth=2).fit(x * 3 + 1, y))
    with pytest.raises(ValueError, match="non-identity link"):
        spectrum(
            xgboost.XGBRegressor(n_estimators=2, objective="reg:logistic").fit(
                x, (y > 0).astype(float)
            )
        )
    spec = spectrum(DecisionTreeRegressor(max_depth=3).fit(x, y))
    with pytest.raises(ValueError, match="width n = 5"):
        spec.predict(np.zeros((3, 6)))
    with pytest.raises(ValueError, match="0/1"):
        spec.predict(np.full((3, 5), 2))
    with pytest.raises(ValueError, match="shape"):
        SparseSpectrum(70, np.zeros((2, 1), dtype=np.uint64), np.zeros(2))


def test_take_and_group_predictions():
    x, y = _problem(7)
    spec = spectrum(RandomForestRegressor(n_estimators=3, max_depth=4, random_state=1).fit(x, y))
    labels = np.random.default_rng(0).integers(0, 3, (len(spec), 2))
    groups = spec.predict_groups(x, labels, 3)
    for o in range(2):
        for j in range(3):
            part = spec.take(labels[:, o] == j)
            np.testing.assert_allclose(groups[:, o, j], part.predict(x), atol=1e-12)
    np.testing.assert_allclose(groups.sum(-1)[:, 0], spec.predict(x), atol=1e-12)


@pytest.mark.parametrize("n", [20, 63, 130])
def test_group_sum_paths(n):
    """Summing equal frequencies: packed-index sort, plain argsort (keys too wide to share a word
    with the index) and multi-word lexsort all agree with a dict."""
    rng = np.random.default_rng(n)
    ints = [int(v) for v in rng.integers(0, 2 ** min(n, 62), 50)] * 4
    ints = [v | (1 << (n - 1)) if i % 3 else v for i, v in enumerate(ints)]  # use the top bit
    values = rng.normal(size=len(ints))
    words = np.array(
        [[(v >> (64 * w)) & (2**64 - 1) for w in range(n_words(n))] for v in ints],
        dtype=np.uint64,
    )
    keys, sums = trees._group_sum(words, values)
    expected = {}
    for v, c in zip(ints, values):
        expected[v] = expected.get(v, 0.0) + c
    got = SparseSpectrum(n, keys, sums)
    assert list(got.frequencies) == sorted(expected)
    np.testing.assert_allclose(sums, [expected[v] for v in sorted(expected)], atol=1e-12)


@pytest.mark.parametrize("n", [5, 64, 70])
def test_packed_rows_give_the_inner_products_over_gf2(n):
    """The one bit-parity helper of trees and SPRIGHT: packing round-trips, a row of n <= 64
    bits packs to the integer it spells MSB-first, and the parity of two rows' AND is their
    inner product mod 2."""
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, 2, (2, 50, n), dtype=np.uint8)
    assert np.array_equal(unpack(pack(a), n), a) and pack(a).shape == (50, n_words(n))
    if n <= 64:
        assert int(pack(a)[0, 0]) == int("".join(map(str, a[0])), 2)
    expected = (a.astype(np.int64) * b).sum(axis=1) % 2
    assert np.array_equal(parity(pack(a) & pack(b), axis=-1), expected)
