"""whcore.core.arrays: which columns a fit can learn from."""

import numpy as np

from whcore.core.arrays import varying_columns


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
