"""EN-S: the ADMM regularizer on SPRIGHT's fixed sample locations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from whcore.core.arrays import Data
from whcore.core.regularizers import Context, make_regularizer
from whcore.core.rng import derive_seed
from whcore.core.spright import SprightDesign
from whcore.core.training import TrainConfig, train
from whcore.data.synthetic import random_sparse, sample_inputs

CPU = torch.device("cpu")


class SparseNet(torch.nn.Module):
    """A stand-in 'network' with an exactly sparse spectrum, the same for every member:
    (S, N, n) -> (S, N)."""

    def __init__(self, freqs: np.ndarray, amps: np.ndarray):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(()))
        self.freqs = torch.as_tensor(freqs, dtype=torch.float32).T
        self.amps = torch.as_tensor(amps, dtype=torch.float32)

    def forward(self, x):
        parity = torch.remainder(x @ self.freqs, 2)
        return self.scale * ((1 - 2 * parity) @ self.amps)


def ens(n, seeds, **params):
    params = {"lam": 1.0, "rho": 0.1, "m": 4, **params}
    return make_regularizer("ens", params, Context(n=n, seeds=seeds, device=CPU))


def sparse_net(n: int, k: int = 5, seed: int = 0) -> SparseNet:
    target = random_sparse(n, k, 3, seed)
    return SparseNet(target.frequencies, target.amplitudes)


def test_registered_with_default_d_and_seeded_designs():
    reg = ens(12, [3, 4])
    assert reg.params == {"lam": 1.0, "rho": 0.1, "m": 4, "d": 3, "decoder": "robust"}
    assert reg.designs == [SprightDesign(12, 4, 3, derive_seed(s, "spright")) for s in (3, 4)]


@pytest.mark.parametrize(
    "params,match",
    [
        ({"m": 13}, "hash size"),
        ({"m": 0}, "hash size"),
        ({"d": 0}, "delay pairs"),
        ({"rho": -1.0}, "rho"),
    ],
)
def test_bad_parameters_raise(params, match):
    with pytest.raises(ValueError, match=match):
        ens(12, [0], **params)


def test_initial_penalty_is_weighted_mean_square():
    net = sparse_net(10)
    reg = ens(10, [0], lam=0.5, rho=0.2)
    points = torch.as_tensor(reg.designs[0].points, dtype=torch.float32)
    expected = 0.5 * 0.2 / 2 * (net(points) ** 2).mean()
    torch.testing.assert_close(reg.penalty(net), expected.reshape(1))


def test_stacked_members_equal_members_alone():
    """Designs de-duplicate to different sizes; the padded stack gives each member exactly its
    own penalty, before and after the epoch-end update."""
    net, seeds = sparse_net(9, seed=1), [0, 1, 2]
    stacked = ens(9, seeds)
    alone = [ens(9, [s]) for s in seeds]
    assert len(set(stacked.sizes)) > 1  # the padding path is exercised
    for epoch in (0, 1):
        torch.testing.assert_close(
            stacked.penalty(net), torch.cat([reg.penalty(net) for reg in alone])
        )
        stacked.on_epoch_end(net, epoch + 1)
        for reg in alone:
            reg.on_epoch_end(net, epoch + 1)


def test_admm_step_on_an_exactly_sparse_function():
    """SPRIGHT recovers the sparse function: Hu = f(U), gamma stays 0, the penalty vanishes.
    (Float32 rounding of f adds exactly-sparse dust of size 1e-8, which SPRIGHT may find too.)"""
    net = sparse_net(14, k=6)
    reg = ens(14, [0, 1], m=5)
    record = reg.on_epoch_end(net, 1)
    assert set(record) == {"fourier_time"} and record["fourier_time"] > 0
    assert min(reg.support_sizes) >= 6
    expected = net(reg.points).detach()
    for s, size in enumerate(reg.sizes):  # rows beyond a member's size are padding
        torch.testing.assert_close(reg.hu[s, :size], expected[s, :size], atol=1e-5, rtol=0)
    assert float(reg.gamma.abs().max()) < 1e-5
    assert float(reg.penalty(net).detach().abs().max()) < 1e-9


def test_float32_sparse_functions_are_recovered_whatever_the_draw():
    """Rounding dust of float32 network outputs never hides a singleton (with a floor below
    float32 precision, 8 of 50 such members recovered nothing)."""
    for seed in range(10):
        net = sparse_net(14, k=6, seed=seed)
        reg = ens(14, [0, 1], m=5)
        reg.on_epoch_end(net, 1)
        expected = net(reg.points).detach()
        for s, size in enumerate(reg.sizes):
            torch.testing.assert_close(reg.hu[s, :size], expected[s, :size], atol=1e-5, rtol=0)


def test_the_decoder_is_a_method_parameter():
    net = sparse_net(14, k=6)
    reference = ens(14, [0], m=5, decoder="reference")
    assert reference.decoder == "reference"
    reference.on_epoch_end(net, 1)
    expected = net(reference.points).detach()[0, : reference.sizes[0]]
    torch.testing.assert_close(reference.hu[0, : reference.sizes[0]], expected, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="decoder must be one of"):
        ens(14, [0], decoder="fancy")


def test_nothing_found_changes_nothing():
    zero = SparseNet(np.zeros((1, 8), dtype=np.uint8), np.zeros(1))
    reg = ens(8, [0])
    reg.on_epoch_end(zero, 1)
    assert reg.support_sizes == [0]
    assert not reg.hu.any() and not reg.gamma.any()


def test_training_run_end_to_end_records_fourier_time():
    n = 25
    target = random_sparse(n, 10, 3, seed=0)
    x = sample_inputs(n, 300, seed=1)
    y = target(x)
    data = Data(x[:150], y[:150], x[150:225], y[150:225], x[225:], y[225:])
    config = TrainConfig(epochs=2, batch_size=50, width=1, patience=10)
    records = train(data, "ens", {"lam": 0.1, "rho": 0.01, "m": 4}, [0, 1], config)
    assert len(records) == 2 * 3 and (records["status"] == "ok").all()
    trained = records[records["epoch"] > 0]
    assert trained["fourier_time"].gt(0).all()
    assert (trained["fourier_time"] <= trained["reg_time"]).all()
    assert (trained["reg_time"] <= trained["epoch_time"]).all()
    assert all(math.isfinite(v) for v in trained["test_mse"])
