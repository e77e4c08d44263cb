"""whcore.core.arrays: which columns a fit can learn from."""

import numpy as np

from whcore.core.arrays import Data, varying_columns


def test_varying_columns_are_those_with_two_values_over_the_rows():
    rng = np.random.default_rng(3)
    for _ in range(20):
        rows, cols = rng.integers(1, 12), rng.integers(1, 9)
        x = rng.integers(0, 2, (rows, cols)).astype(np.float32)
        x[:, rng.random(cols) < 0.4] = rng.integers(0, 2)  # some columns constant, 0 or 1
        brute = [len({float(v) for v in x[:, j]}) > 1 for j in range(cols)]
        assert varying_columns(x).tolist() == brute


def test_no_column_varies_over_no_rows():
    assert varying_columns(np.zeros((0, 4))).tolist() == [False] * 4


def test_data_on_varying_columns_keeps_the_training_rows_varying_columns_in_every_split():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, (30, 6)).astype(np.float32)
    x[:20, [1, 4]] = 0  # constant over the training rows, not over the others
    y = rng.normal(size=30)
    data = Data(x[:20], y[:20], x[20:25], y[20:25], x[25:], y[25:]).on_varying_columns()
    keep = [0, 2, 3, 5]
    assert data.n == 4
    np.testing.assert_array_equal(data.x_train, x[:20][:, keep])
    np.testing.assert_array_equal(data.x_val, x[20:25][:, keep])
    np.testing.assert_array_equal(data.x_test, x[25:][:, keep])
    np.testing.assert_array_equal(data.y_test, y[25:])
    without_test = Data(x[:20], y[:20], x[20:25], y[20:25]).on_varying_columns()
    assert without_test.x_test.shape == (0, 0)
