import re

import numpy as np
import pandas as pd
import pytest

from whcore import Data, TrainConfig, train
from whcore.core.monitoring import EarlyStopping
from whcore.core.regularizers import Context, make_regularizer
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


@pytest.mark.parametrize("seeds", [0, 3, np.int64(3)])
def test_seeds_given_as_one_int_are_refused_naming_both_readings(seeds):
    """seeds=3 reads as seed 3 or as three seeds (seeds=0 as none): one line names the fix."""
    with pytest.raises(TypeError, match=rf"got the int {seeds}; pass \[{seeds}\] .*range\(k\)"):
        train(sparse_data(n=6), "standard", {}, seeds, TrainConfig(**FAST))


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


@pytest.mark.parametrize(
    "method,grid",
    [
        ("hashwh", [{"lam": 0.001, "b": 5}, {"lam": 0.1, "b": 5}, {"lam": 1.0, "b": 5}]),
        ("fullwh", [{"lam": 0.01}, {"lam": 1.0}]),
        (
            "ens",
            [{"lam": 0.1, "rho": 0.01, "m": 3, "d": 1}, {"lam": 1, "rho": 0.1, "m": 3, "d": 1}],
        ),
    ],
)
def test_a_stacked_grid_equals_each_configuration_alone(method, grid):
    """One stacked model of every (configuration, seed) gives each configuration the records
    it gets trained on its own, to float32 rounding: same initial weights, batches and hashing
    matrices per seed, its own weight per member."""
    from whcore.core.training import train_grid

    data, cfg = sparse_data(n=8, train_size=100), TrainConfig(**{**FAST, "epochs": 5})
    together = train_grid(data, method, grid, [3, 4], cfg)
    assert together["stack_size"].eq(len(grid) * 2).all()
    assert together.groupby("config")["seed"].unique().map(list).tolist() == [[3, 4]] * len(grid)
    for index, params in enumerate(grid):
        alone = train(data, method, params, [3, 4], cfg)
        mine = together[together["config"] == index].reset_index(drop=True)
        assert mine[["seed", "epoch"]].equals(alone[["seed", "epoch"]])
        for col in ("train_mse", "val_mse", "test_mse"):
            np.testing.assert_allclose(mine[col], alone[col], rtol=1e-4, atol=1e-6)
    # the weights matter: the largest and smallest lam end apart
    first, last = together[together["config"] == 0], together[together["config"] == len(grid) - 1]
    assert not np.allclose(first["train_mse"].iloc[-1], last["train_mse"].iloc[-1])


def test_one_model_at_a_time_times_each_model_alone():
    from whcore.core.training import train_grid

    cfg = TrainConfig(**{**FAST, "epochs": 2, "vectorize": False})
    records = train_grid(sparse_data(), "hashwh", [{"lam": 0.1, "b": 4}], [0, 1], cfg)
    assert records["stack_size"].eq(1).all() and set(records["seed"]) == {0, 1}


def test_stacked_members_must_share_what_shapes_the_computation():
    ctx = Context(n=9, seeds=[0, 0], device="cpu")
    with pytest.raises(ValueError, match=r"must share \['b'\]"):
        make_regularizer("hashwh", [{"lam": 0.1, "b": 4}, {"lam": 0.1, "b": 5}], ctx)
    with pytest.raises(ValueError, match="3 parameter sets for 2 members"):
        make_regularizer("fullwh", [{"lam": 0.1}] * 3, ctx)
    with pytest.raises(ValueError, match="must be >= 0"):
        make_regularizer(
            "ens", [{"lam": 0.1, "rho": -1, "m": 3}, {"lam": 1, "rho": 1, "m": 3}], ctx
        )


def test_reduced_precision_is_opt_in_and_checked():
    assert TrainConfig().precision == "fp32"
    with pytest.raises(ValueError, match="precision must be one of"):
        TrainConfig(precision="fp16")
    cfg = TrainConfig(**{**FAST, "epochs": 3, "precision": "bf16"})
    bf16 = train(sparse_data(), "hashwh", {"lam": 0.01, "b": 5}, [0], cfg)
    fp32 = train(
        sparse_data(), "hashwh", {"lam": 0.01, "b": 5}, [0], TrainConfig(**{**FAST, "epochs": 3})
    )
    assert np.isfinite(bf16["val_mse"]).all()
    assert not np.allclose(bf16["val_mse"].iloc[1:], fp32["val_mse"].iloc[1:], rtol=1e-6)


def test_the_stopwatch_adds_up_blocks():
    import time

    import torch

    from whcore.core.monitoring import Stopwatch

    watch = Stopwatch(torch.device("cpu"))
    for _ in range(3):
        with watch:
            time.sleep(0.01)
    assert 0.03 <= watch.seconds() < 0.5


@pytest.mark.gpu
def test_a_stacked_grid_on_cuda_matches_the_cpu():
    from whcore.core.training import train_grid

    grid = [{"lam": 0.01, "b": 5}, {"lam": 0.1, "b": 5}]
    data = sparse_data(n=8, train_size=100)
    cpu = train_grid(data, "hashwh", grid, [0, 1], TrainConfig(**{**FAST, "epochs": 3}))
    cuda = train_grid(
        data, "hashwh", grid, [0, 1], TrainConfig(**{**FAST, "epochs": 3, "device": "cuda"})
    )
    assert cpu[["config", "seed", "epoch"]].equals(cuda[["config", "seed", "epoch"]])
    np.testing.assert_allclose(cuda["val_mse"], cpu["val_mse"], rtol=1e-3, atol=1e-5)
    # Every (config, seed) has an epoch-0 row (before training, time 0): only trained epochs count.
    trained = cuda[cuda["epoch"] > 0]
    assert len(trained) == 12
    assert (trained["epoch_time"] > 0).all()
    # The penalty is timed apart in eager epochs; epochs replayed from CUDA graphs leave it NaN.
    eager = trained["epoch"] == 1
    assert (trained.loc[eager, "reg_time"] > 0).all()
    assert trained.loc[~eager, "reg_time"].isna().all()


@pytest.mark.gpu
@pytest.mark.parametrize(
    "method, grid",
    [
        ("hashwh", [{"lam": 0.01, "b": 5}, {"lam": 0.1, "b": 5}]),
        ("fullwh", [{"lam": 0.01}]),
        ("standard", [{}]),
    ],
)
def test_cuda_graphs_replay_exactly_the_eager_steps(monkeypatch, method, grid):
    """Every record of a job replayed from CUDA graphs equals the eager job's, bit for bit: the
    same kernels, the same per-member sigma draws (train size 100, batch 32: a tail batch of 4
    has its own graph)."""
    from whcore.core.training import train_grid

    data = sparse_data(n=8, train_size=100)
    config = TrainConfig(**{**FAST, "epochs": 4, "device": "cuda"})
    runs = {}
    for graphs in ("0", "1"):
        monkeypatch.setenv("WHCORE_CUDA_GRAPHS", graphs)
        runs[graphs] = train_grid(data, method, grid, [0, 1], config)
    columns = ["config", "seed", "epoch", "train_mse", "val_mse", "test_mse"]
    assert runs["1"]["reg_time"].isna().any()  # the graphs did replay
    assert runs["0"][columns].equals(runs["1"][columns])


@pytest.mark.gpu
def test_the_cuda_stopwatch_measures_device_time():
    import torch

    from whcore.core.monitoring import Stopwatch

    device = torch.device("cuda")
    x = torch.randn(2048, 2048, device=device)
    watch = Stopwatch(device)
    for _ in range(3):
        with watch:
            x = (x @ x).tanh()
    assert watch._spans and watch.seconds() > 0 and not watch._spans


def test_cuda_graphs_only_where_they_replay_the_same_step(monkeypatch):
    """Graphs on CUDA for graph-safe penalties in fp32/TF32; never on the CPU, for EN-S, under
    bf16 autocast, or with WHCORE_CUDA_GRAPHS=0."""
    import torch

    from whcore.core.regularizers import Context, make_regularizer
    from whcore.core.training import graphs_wanted

    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    ctx = Context(8, [0], cpu)
    hashwh = make_regularizer("hashwh", {"lam": 0.1, "b": 3}, ctx)
    ens = make_regularizer("ens", {"lam": 0.1, "rho": 0.1, "m": 3, "d": 1}, ctx)
    fp32, bf16 = TrainConfig(), TrainConfig(precision="bf16")
    monkeypatch.delenv("WHCORE_CUDA_GRAPHS", raising=False)
    assert graphs_wanted(hashwh, fp32, cuda) and graphs_wanted(
        hashwh, TrainConfig(precision="tf32"), cuda
    )
    assert not graphs_wanted(hashwh, fp32, cpu)
    assert not graphs_wanted(ens, fp32, cuda)
    assert not graphs_wanted(hashwh, bf16, cuda)
    monkeypatch.setenv("WHCORE_CUDA_GRAPHS", "0")
    assert not graphs_wanted(hashwh, fp32, cuda)


def test_adam_falls_back_where_pytorch_has_no_fused_kernel(monkeypatch):
    """PyTorch 2.2 (the last release for Intel Macs) has no fused CPU Adam."""
    import torch

    from whcore import MLP
    from whcore.core.training import make_optimizer

    real = torch.optim.Adam

    def adam(params, lr, fused=None, capturable=False):
        if fused:
            raise RuntimeError("`fused=True` requires all the params to be CUDA tensors")
        return real(params, lr=lr, capturable=capturable)

    monkeypatch.setattr(torch.optim, "Adam", adam)
    opt = make_optimizer(MLP(4, 1), 0.01, torch.device("cpu"))
    assert isinstance(opt, real) and not opt.defaults.get("fused")


PROGRESS = re.compile(
    r"^(model (\d+)/(\d+), )?epoch (\d+)/(\d+): best val MSE [0-9.e+-]+, \d+/\d+ training, "
    r"\d+(s|m\d\ds|h\d\dm) elapsed, ~\d+(s|m\d\ds|h\d\dm) left$"
)


@pytest.mark.parametrize("vectorize", [True, False])
def test_progress_lines_say_epoch_of_total_best_val_loss_and_time_left(vectorize):
    from whcore.core.training import train_grid

    lines = []
    cfg = TrainConfig(**{**FAST, "epochs": 4, "log_every": 2, "vectorize": vectorize})
    records = train_grid(
        sparse_data(), "hashwh", [{"lam": 0.1, "b": 4}], [0, 1], cfg, log=lines.append
    )
    matches = [PROGRESS.match(line) for line in lines]
    assert lines and all(matches), lines
    assert [int(m[4]) for m in matches] == [2, 4] * (1 if vectorize else 2)
    assert {int(m[5]) for m in matches} == {4} and all(len(line) <= 100 for line in lines)
    # one model at a time: the line names the model, the time left is the whole job's
    assert [m[1] is not None for m in matches] == [not vectorize] * len(lines)
    # the best validation loss so far: the lowest val MSE of the epochs trained, epoch 0 excluded
    last = float(lines[-1].split("best val MSE ")[1].split(",")[0])
    best = records.loc[records["epoch"] > 0, "val_mse"].min()
    assert last == pytest.approx(best, rel=1e-3)


def test_time_left_is_spent_fraction_extrapolated(monkeypatch):
    from whcore.core import monitoring

    monkeypatch.setattr(monitoring.time, "perf_counter", lambda: 1000.0)
    progress = monitoring.Progress(epochs=10, stacks=2)
    progress.start -= 30  # 30 s spent on the first half of model 1: a quarter of the job
    assert progress.line(5, 0.5, 2, 2).endswith("30s elapsed, ~1m30s left")
    assert progress.line(5, 0.5, 2, 2).startswith("model 1/2, epoch 5/10: best val MSE 0.5")
    progress.done = 1
    assert "model 2/2, epoch 5/10" in progress.line(5, 0.5, 1, 1)


def _units(count=3, n=8, train_size=100):
    return [sparse_data(n=n, train_size=train_size, seed=seed) for seed in range(count)]


@pytest.mark.parametrize("vectorize", [True, False])
def test_units_stacked_in_one_job_train_as_each_alone(vectorize):
    """A cell's units (data sets of one shape) stacked as members of one model: each member's
    records are those of its unit trained alone (float rounding only), with a unit column."""
    from whcore.core.training import train_grid

    grid = [{"lam": 0.01, "b": 5}, {"lam": 0.1, "b": 5}]
    config = TrainConfig(**{**FAST, "epochs": 5, "vectorize": vectorize})
    units = _units()
    stacked = train_grid(units, "hashwh", grid, [0, 1], config)
    assert sorted(stacked["unit"].unique()) == [0, 1, 2]
    columns = ["config", "seed", "epoch", "train_mse", "val_mse", "test_mse", "test_r2"]
    for u, unit in enumerate(units):
        alone = train_grid(unit, "hashwh", grid, [0, 1], config)
        mine = stacked[stacked["unit"] == u].reset_index(drop=True)
        assert mine[columns[:3]].equals(alone[columns[:3]])
        np.testing.assert_allclose(mine[columns[3:]], alone[columns[3:]], rtol=1e-5, atol=1e-7)
    # the units differ, so a unit's records are its own, not another's
    first, second = (stacked[stacked["unit"] == u]["val_mse"].to_numpy() for u in (0, 1))
    assert not np.allclose(first, second)


def test_units_stacked_with_seeds_of_their_own_train_as_each_alone():
    """Each unit may bring its own seeds (one list per unit): its members start from them,
    as the unit trained alone with those seeds would."""
    from whcore.core.training import train_grid

    grid, config = [{}], TrainConfig(**{**FAST, "epochs": 4})
    units, seeds = _units(2), [[3, 4], [7]]
    stacked = train_grid(units, "standard", grid, seeds, config)
    for u, (unit, own) in enumerate(zip(units, seeds)):
        alone = train_grid(unit, "standard", grid, own, config)
        mine = stacked[stacked["unit"] == u].reset_index(drop=True)
        assert mine[["seed", "epoch"]].equals(alone[["seed", "epoch"]])
        np.testing.assert_allclose(mine["val_mse"], alone["val_mse"], rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="3 lists of seeds for 2 data sets"):
        train_grid(units, "standard", grid, [[0], [1], [2]], config)
    with pytest.raises(ValueError, match="at least one training seed"):
        train_grid(units, "standard", grid, [[0], []], config)
    with pytest.raises(TypeError, match="got the int 3"):
        train_grid(units, "standard", grid, 3, config)


def test_units_of_other_shapes_are_refused():
    from whcore.core.training import train_grid

    units = [sparse_data(n=8, train_size=100), sparse_data(n=8, train_size=120)]
    with pytest.raises(ValueError, match="same splits of the same sizes.*separate jobs"):
        train_grid(units, "standard", [{}], [0], TrainConfig(**FAST))
    with pytest.raises(ValueError, match="at least one data set"):
        train_grid([], "standard", [{}], [0], TrainConfig(**FAST))


@pytest.mark.gpu
def test_units_stacked_on_cuda_with_graphs_train_as_each_alone():
    """On CUDA (steps replayed from graphs) too, units stacked in one job train as each alone."""
    from whcore.core.training import train_grid

    grid = [{"lam": 0.01, "b": 5}]
    config = TrainConfig(**{**FAST, "epochs": 4, "device": "cuda"})
    units = _units()
    stacked = train_grid(units, "hashwh", grid, [0, 1], config)
    assert stacked["reg_time"].isna().any()  # the graphs did replay
    for u, unit in enumerate(units):
        alone = train_grid(unit, "hashwh", grid, [0, 1], config)
        mine = stacked[stacked["unit"] == u].reset_index(drop=True)
        assert mine[["config", "seed", "epoch"]].equals(alone[["config", "seed", "epoch"]])
        np.testing.assert_allclose(mine["val_mse"], alone["val_mse"], rtol=1e-4, atol=1e-6)
