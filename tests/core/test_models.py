import math

import pytest
import torch

from whcore import MLP
from whcore.core.models import layer_sizes


def test_layer_sizes_follow_the_paper():
    assert layer_sizes(10, 10) == [10, 100, 100, 10, 1]
    assert layer_sizes(50, 2) == [50, 100, 100, 50, 1]
    with pytest.raises(ValueError, match="width"):
        layer_sizes(10, 0)
    with pytest.raises(ValueError, match="n must be"):
        layer_sizes(0, 1)


def test_single_member_shapes():
    net = MLP(7, 2, seeds=0)
    assert net(torch.rand(5, 7)).shape == (5,)
    with pytest.raises(ValueError, match="n = 7"):
        net(torch.rand(5, 8))


def test_stacked_members_equal_lone_networks():
    seeds = [3, 1, 4]
    stacked = MLP(6, 3, seeds=seeds)
    x = torch.rand(3, 9, 6)
    out = stacked(x)
    assert out.shape == (3, 9)
    for s, seed in enumerate(seeds):
        lone = MLP(6, 3, seeds=seed)
        for w_stacked, w_lone in zip(stacked.parameters(), lone.parameters()):
            assert torch.equal(w_stacked[s], w_lone[0])
        assert torch.allclose(out[s], lone(x[s]), atol=1e-6)
    shared = stacked(x[0])
    assert shared.shape == (3, 9) and torch.allclose(shared[0], out[0], atol=1e-6)


def test_xavier_uniform_bounds_and_leaky_relu():
    net = MLP(20, 10, seeds=0)
    for w in net.weights:
        fan_in, fan_out = w.shape[1], w.shape[2]
        bound = math.sqrt(6 / (fan_in + fan_out))
        assert w.abs().max() <= bound
        assert w.abs().max() > 0.9 * bound  # uniform over the whole range
    # A negative pre-activation passes through with slope 0.01, not 0.
    assert net.negative_slope == 0.01


def test_seeds_are_reproducible_and_distinct():
    a, b, c = MLP(5, 2, seeds=1), MLP(5, 2, seeds=1), MLP(5, 2, seeds=2)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.weights[0], c.weights[0])
    with pytest.raises(ValueError, match="at least one member"):
        MLP(5, 2, seeds=[])


@pytest.mark.parametrize("members", [1, 3])
def test_predict_in_chunks_equals_one_forward_pass(members, monkeypatch):
    from whcore.core import models

    monkeypatch.setattr(models, "CPU_CHUNK_ELEMENTS", 1)  # the smallest chunks: 64 rows
    model = MLP(7, 3, seeds=list(range(members)))
    shared = torch.randint(0, 2, (200, 7)).float()
    own = torch.randint(0, 2, (members, 150, 7)).float()
    for x in (shared, own):
        with torch.no_grad():
            whole = model(x)
        chunked = model.predict(x)
        assert chunked.shape == whole.shape and not chunked.requires_grad
        torch.testing.assert_close(chunked, whole, rtol=1e-6, atol=1e-7)


def _forward_backward(model: MLP, x: torch.Tensor):
    model.zero_grad()
    out = model(x)
    (out**2).sum().backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize(("per_chunk", "bitwise"), [(2, True), (1, False)])
def test_member_chunks_give_the_values_and_gradients_of_one_pass(per_chunk, bitwise, monkeypatch):
    from whcore.core import models

    model = MLP(7, 3, seeds=list(range(7)))  # widest layer: 21 units
    x = torch.randint(0, 2, (7, 40, 7)).float()
    monkeypatch.setattr(models, "CPU_CHUNK_ELEMENTS", 2**40)
    assert model.member_chunks(x) == [slice(None)]
    whole, whole_grads = _forward_backward(model, x)
    monkeypatch.setattr(models, "CPU_CHUNK_ELEMENTS", per_chunk * 40 * 21)
    chunks = model.member_chunks(x)
    sizes = [len(range(7)[chunk]) for chunk in chunks]
    assert sum(sizes) == 7 and min(sizes) >= per_chunk and max(sizes) - min(sizes) <= 1
    assert [c.start for c in chunks] == [0, *[c.stop for c in chunks[:-1]]]  # in order
    chunked, chunked_grads = _forward_backward(model, x)
    shared, _ = _forward_backward(model, x[0])  # one input set for every member
    assert shared.shape == (7, 40)
    # The same arithmetic per member; BLAS may block products of other batch sizes differently.
    for got, want in [(chunked, whole), *zip(chunked_grads, whole_grads)]:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
