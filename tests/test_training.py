import numpy as np
import pandas as pd
import pytest

from whcore import Data, TrainConfig, train
from whcore.core.regularizers import Context, make_regularizer
from whcore.core.training import EarlyStopping
from whcore.data.synthetic import random_sparse, sample_inputs


def sparse_data(n=10, train_size=200, seed=0):
    target = random_sparse(n, 5, 4, seed=seed)
    x = sample_inputs(n, 2**n if n <= 10 else 3 * train_size, seed)
    y = target(x)
    cut = train_size + (len(x) - train_size) // 2
    return Data(
        x[:train_size], y[:train_size], x[train_size:cut], y[train_size:cut], x[cut:], y[cut:]
    )


FAST = dict(epochs=15, batch_size=32, width=2, patience=10)


def test_training_reduces_validation_mse():
    records = train(sparse_data(), "hashwh", {"lam": 0.01, "b": 5}, [0], TrainConfig(**FAST))
    first, best = records["val_mse"].iloc[0], records["val_mse"].min()
    assert best < 0.5 * first
    assert set(records.columns) >= {
        "seed",
        "epoch",
        "train_mse",
        "val_mse",
        "test_mse",
        "train_r2",
        "val_r2",
        "test_r2",
        "epoch_time",
        "reg_time",
        "status",
    }
    assert records["epoch"].tolist() == list(range(len(records)))
    assert (records["reg_time"][1:] > 0).all()


@pytest.mark.parametrize(
    "method,params", [("standard", {}), ("hashwh", {"lam": 0.1, "b": 4}), ("fullwh", {"lam": 0.1})]
)
def test_same_seeds_give_identical_records(method, params):
    data, cfg = sparse_data(), TrainConfig(**{**FAST, "epochs": 4})
    a = train(data, method, params, [5, 6], cfg)
    b = train(data, method, params, [5, 6], cfg)
    cols = [c for c in a.columns if not c.endswith("_time")]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    c = train(data, method, params, [7, 6], cfg)
    assert not np.allclose(a[a.seed == 5]["val_mse"], c[c.seed == 7]["val_mse"])


def test_stacked_training_equals_one_by_one():
    data = sparse_data()
    cfg = TrainConfig(**{**FAST, "epochs": 6})
    stacked = train(data, "hashwh", {"lam": 0.01, "b": 5}, [1, 2, 3], cfg)
    single = train(
        data,
        "hashwh",
        {"lam": 0.01, "b": 5},
        [1, 2, 3],
        TrainConfig(**{**FAST, "epochs": 6, "vectorize": False}),
    )
    assert stacked[["seed", "epoch"]].equals(single[["seed", "epoch"]])
    for col in ("train_mse", "val_mse", "test_mse"):
        np.testing.assert_allclose(stacked[col], single[col], rtol=1e-4, atol=1e-6)


def test_early_stopping_on_a_crafted_sequence():
    losses = [5.0, 4.0, 3.0, 3.5, 2.9, 3.0, 3.1, 3.2]
    stopper = EarlyStopping(patience=3)
    stops = [stopper.update(epoch, loss) for epoch, loss in enumerate(losses)]
    assert stops.index(True) == 7  # best at epoch 4, three epochs without improvement
    assert stopper.best_epoch == 4 and stopper.best == 2.9


def test_early_stopping_ends_training():
    data = sparse_data()
    records = train(
        data, "standard", {}, [0], TrainConfig(epochs=200, batch_size=64, width=1, patience=2)
    )
    trained = records[records["epoch"] > 0]
    best_epoch = int(trained.loc[trained["val_mse"].idxmin(), "epoch"])
    assert records["epoch"].max() == best_epoch + 2 < 200


def test_the_untrained_network_never_counts_as_best():
    stopper = EarlyStopping(patience=2)
    stops = [stopper.update(epoch, loss) for epoch, loss in enumerate([0.1, 5.0, 4.0, 4.5, 4.2])]
    assert stopper.best_epoch == 2 and stops == [False, False, False, False, True]


def test_no_early_stopping_trains_every_epoch():
    config = TrainConfig(epochs=12, batch_size=64, width=1, patience=None)
    records = train(sparse_data(), "standard", {}, [0, 1], config)
    assert (records.groupby("seed")["epoch"].max() == 12).all()
    assert EarlyStopping(None).update(500, 1.0) is False


def test_divergence_is_recorded_not_raised():
    data = sparse_data()
    data.y_train = data.y_train * 1e20  # squared errors overflow float32
    records = train(data, "standard", {}, [0], TrainConfig(**FAST))
    assert records["status"].iloc[-1] == "diverged"
    assert "NaN or infinite" in records["note"].iloc[-1]
    assert (records["status"] == "diverged").sum() == 1


def test_bad_methods_and_params():
    ctx = Context(n=25, seeds=[0], device="cpu")
    with pytest.raises(ValueError, match="unknown method 'hashWH'"):
        make_regularizer("hashWH", {}, ctx)
    with pytest.raises(ValueError, match="n = 25 is too large"):
        make_regularizer("fullwh", {"lam": 1.0}, ctx)
    with pytest.raises(ValueError, match="needs parameter"):
        make_regularizer("hashwh", {"lam": 1.0}, ctx)
    with pytest.raises(ValueError, match="no parameter"):
        make_regularizer("hashwh", {"lam": 1.0, "b": 4, "beta": 2}, ctx)
    with pytest.raises(ValueError, match="must be int"):
        make_regularizer("hashwh", {"lam": 1.0, "b": 4.5}, ctx)
    with pytest.raises(ValueError, match="b = 30"):
        make_regularizer("hashwh", {"lam": 1.0, "b": 30}, ctx)
    with pytest.raises(ValueError, match="epochs"):
        TrainConfig(epochs=0)
    with pytest.raises(ValueError, match="seed"):
        train(sparse_data(), "standard", {}, [], TrainConfig(**FAST))
