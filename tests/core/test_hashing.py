import math

import pytest
import torch

from whcore import fullwh_penalty, fwht, hashed_inputs, hashwh_penalty, sample_sigma
from whcore.core.wht import all_inputs, bits_to_int, int_to_bits


def sparse_function(n, coefficients):
    """f(x) = sum_f G(f) (-1)^<f, x> as a callable on (N, n) tensors."""
    freqs = int_to_bits(torch.tensor(list(coefficients)), n).double()
    amps = torch.tensor(list(coefficients.values()), dtype=torch.float64)

    def f(x):
        parity = (x.double() @ freqs.T) % 2
        return (1 - 2 * parity) @ amps

    return f


def test_hashed_inputs_match_matrix_product():
    gen = torch.Generator().manual_seed(0)
    for n, b in [(5, 1), (10, 4), (13, 13), (40, 7)]:
        sigma = sample_sigma(n, b, gen)
        table = int_to_bits(torch.arange(2**b), b)  # MSB-first
        expected = (table @ sigma.long().T) % 2
        assert torch.equal(hashed_inputs(sigma).long(), expected)


def test_hashed_inputs_batched():
    sigma = sample_sigma(12, 5, torch.Generator().manual_seed(1), batch_shape=(3,))
    x = hashed_inputs(sigma)
    assert x.shape == (3, 32, 12)
    assert torch.equal(x[2], hashed_inputs(sigma[2]))


def test_hashing_identity_bucket_sums():
    """Appendix B.1: the WHT of the hashed function is the bucket sums of the coefficients."""
    n, b = 12, 5
    gen = torch.Generator().manual_seed(7)
    freqs = torch.randperm(2**n, generator=gen)[:20].tolist()
    coefs = {f: float(c) for f, c in zip(freqs, torch.randn(20, generator=gen))}
    f = sparse_function(n, coefs)
    for _ in range(5):
        sigma = sample_sigma(n, b, gen)
        buckets = fwht(f(hashed_inputs(sigma, dtype=torch.float64))) / 2**b
        expected = torch.zeros(2**b, dtype=torch.float64)
        for freq, c in coefs.items():
            j = bits_to_int((sigma.long().T @ int_to_bits(torch.tensor(freq), n)) % 2)
            expected[j] += c
        assert torch.allclose(buckets, expected, atol=1e-12)
        assert math.isclose(
            hashwh_penalty(f, sigma).item(), expected.abs().sum().item(), rel_tol=1e-12
        )


def test_collision_rate_is_pairwise_independent():
    """Lemma B.2: two fixed distinct nonzero frequencies collide with probability 2^-b."""
    n, b, trials = 30, 4, 20000
    gen = torch.Generator().manual_seed(3)
    f1 = torch.zeros(n, dtype=torch.long)
    f1[[0, 5, 9]] = 1
    f2 = torch.zeros(n, dtype=torch.long)
    f2[[5, 20]] = 1
    sigma = sample_sigma(n, b, gen, batch_shape=(trials,)).long()
    h1 = (sigma.transpose(1, 2) @ f1) % 2
    h2 = (sigma.transpose(1, 2) @ f2) % 2
    rate = (h1 == h2).all(1).double().mean().item()
    p = 2.0**-b
    assert abs(rate - p) < 5 * math.sqrt(p * (1 - p) / trials)
    zero = (sigma.transpose(1, 2) @ torch.zeros(n, dtype=torch.long)) % 2
    assert (zero == 0).all()


def test_hashwh_with_invertible_sigma_equals_scaled_fullwh():
    n = 8
    gen = torch.Generator().manual_seed(11)
    net = torch.nn.Sequential(torch.nn.Linear(n, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    net = net.double()
    while True:
        sigma = sample_sigma(n, n, gen)
        if torch.linalg.matrix_rank(sigma.double()) == n:  # invertible over the reals
            if len({tuple(r) for r in hashed_inputs(sigma).long().tolist()}) == 2**n:
                break  # and over GF(2): all 2^n points distinct
    hashed = hashwh_penalty(net, sigma)
    full = fullwh_penalty(net, n)
    assert torch.allclose(hashed, 2 ** (n / 2) * full, rtol=1e-10)
    spectrum = fwht(net(all_inputs(n, torch.float64)).squeeze(-1)) / 2**n
    assert torch.allclose(hashed, spectrum.abs().sum(), rtol=1e-10)


def test_zero_function_has_zero_penalty():
    sigma = sample_sigma(10, 6, torch.Generator().manual_seed(0))
    assert hashwh_penalty(lambda x: torch.zeros(len(x)), sigma).item() == 0.0


def test_penalty_is_differentiable():
    """The penalty's gradient is the one finite differences give. It is piecewise linear in a
    linear network's weights (an L1 norm of a linear map of them), so the gradient may be zero
    on some pieces: the weights are drawn from a fixed seed, never the global generator."""
    net = torch.nn.Linear(6, 1)
    draw = torch.Generator().manual_seed(1)
    with torch.no_grad():
        net.weight.copy_(torch.randn(net.weight.shape, generator=draw))
        net.bias.copy_(torch.randn(net.bias.shape, generator=draw))
    sigma = sample_sigma(6, 3, torch.Generator().manual_seed(0))
    hashwh_penalty(net, sigma).backward()
    grad = net.weight.grad.clone()
    eps, numeric = 1e-3, torch.zeros_like(grad)
    with torch.no_grad():
        for i in range(grad.numel()):
            step = torch.zeros_like(grad).view(-1)
            step[i] = eps
            net.weight += step.view_as(grad)
            up = hashwh_penalty(net, sigma).item()
            net.weight -= 2 * step.view_as(grad)
            down = hashwh_penalty(net, sigma).item()
            net.weight += step.view_as(grad)
            numeric.view(-1)[i] = (up - down) / (2 * eps)
    assert grad.abs().sum() > 0
    assert torch.allclose(grad, numeric, atol=1e-2), (grad, numeric)


def test_bad_sigma():
    with pytest.raises(ValueError, match="exceeds the input dimension"):
        sample_sigma(4, 5)
    with pytest.raises(ValueError, match=">= 1"):
        sample_sigma(4, 0)
    with pytest.raises(ValueError, match="only 0 and 1"):
        hashed_inputs(torch.tensor([[0, 2], [1, 0], [1, 1]]))
    with pytest.raises(ValueError, match="exceeds"):
        hashed_inputs(torch.ones(2, 3))
    with pytest.raises(ValueError, match="must map inputs"):
        hashwh_penalty(lambda x: x, sample_sigma(4, 2))


def test_a_transposed_sigma_or_swapped_sizes_are_named():
    """A (b, n) matrix where (n, b) is expected says how to turn it; so does sample_sigma(b, n)."""
    from whcore.core.models import MLP

    sigma = sample_sigma(12, 6, torch.Generator().manual_seed(0))
    with pytest.raises(
        ValueError, match=r"sigma has shape \(6, 12\): is it \(b, n\)\? .*sigma\.T$"
    ):
        hashwh_penalty(MLP(12, 2, seeds=0), sigma.T)
    assert hashwh_penalty(MLP(12, 2, seeds=0), sigma).shape == ()
    with pytest.raises(ValueError, match=r"b = 12 exceeds .* n = 6; .*sample_sigma\(n, b\)\)$"):
        sample_sigma(6, 12)


@pytest.mark.parametrize(
    ("generator", "named"), [(0, "got int;"), ("numpy", "got numpy.random.Generator;")]
)
def test_a_generator_that_is_not_torchs_is_one_type_error(generator, named):
    import numpy as np

    generator = np.random.default_rng(0) if generator == "numpy" else generator
    with pytest.raises(TypeError, match=f"^generator must be a torch.Generator, {named} pass "):
        sample_sigma(6, 3, generator)


@pytest.mark.parametrize("penalty", ["hashwh", "fullwh"])
def test_a_function_returning_numpy_is_one_type_error(penalty):
    def f(x):
        return x.sum(-1).numpy()

    with pytest.raises(TypeError, match="must return a torch.Tensor, got numpy.ndarray; "):
        if penalty == "hashwh":
            hashwh_penalty(f, sample_sigma(4, 2))
        else:
            fullwh_penalty(f, 4)


def test_a_batch_of_sigmas_must_hold_one_per_member_of_a_stacked_model():
    from whcore.core.models import MLP

    net = MLP(6, 2, seeds=[0, 1])
    sigmas = sample_sigma(6, 3, torch.Generator().manual_seed(0), batch_shape=(3,))
    for wrong in (sigmas, sigmas[0], sigmas[None, :2]):
        with pytest.raises(
            ValueError,
            match=r"2 stacked members; .*sample_sigma\(n, b, generator, batch_shape=\(2,\)\)$",
        ):
            hashwh_penalty(net, wrong)
    with pytest.raises(ValueError, match=r"a model of one member; pass one \(n, b\) matrix$"):
        hashwh_penalty(MLP(6, 2, seeds=0), sigmas)
    assert hashwh_penalty(net, sigmas[:2]).shape == (2,)  # one per member
    assert hashwh_penalty(MLP(6, 2, seeds=0), sigmas[0]).shape == ()
    with pytest.raises(ValueError, match=r"^expected inputs of shape \(N, 6\) or \(2, N, 6\)"):
        net(torch.zeros(2, 3, 4, 6))


@pytest.mark.parametrize("repetitions", [1, 3])
def test_hashwh_regularizer_buffers_match_the_reference_penalty(repetitions):
    from whcore.core.models import MLP
    from whcore.core.regularizers import Context, make_regularizer

    seeds = [3, 4]
    net = MLP(9, 2, seeds=seeds)
    reg = make_regularizer(
        "hashwh",
        {"lam": 0.5, "b": 6, "repetitions": repetitions},
        Context(n=9, seeds=seeds, device=torch.device("cpu")),
    )
    for _ in range(2):  # the buffers are refilled each call
        got = reg.penalty(net)
        sigma = reg._sigma.transpose(0, 1).clone()  # (R, S, n, b) just drawn
        expected = torch.stack([hashwh_penalty(net, s) for s in sigma]).mean(0) * 0.5
        assert torch.allclose(got, expected, rtol=1e-5)
        assert torch.equal(
            reg._inputs.view(2, repetitions, 64, 9), hashed_inputs(sigma.transpose(0, 1))
        )


@pytest.mark.parametrize("repetitions", [1, 2])
def test_an_epochs_matrices_drawn_at_its_start_are_those_drawn_step_by_step(repetitions):
    """HashWH's on_epoch_start draws the epoch's sigmas at once; on a CPU every member then sees
    exactly the matrices (and penalties) it would have drawn one step at a time, epoch after
    epoch (steps of 5, then 3: the buffer is redrawn, not extended)."""
    from whcore.core.models import MLP
    from whcore.core.regularizers import Context, make_regularizer

    seeds = [3, 4, 11]
    net = MLP(9, 2, seeds=seeds)

    def regularizer():
        params = {"lam": 0.5, "b": 4, "repetitions": repetitions}
        return make_regularizer("hashwh", params, Context(9, seeds, torch.device("cpu")))

    step_by_step, at_start = regularizer(), regularizer()
    for steps in (5, 3):
        at_start.on_epoch_start(steps)
        for _ in range(steps):
            expected = step_by_step.penalty(net)
            drawn = step_by_step._sigma.clone()
            assert torch.equal(at_start.penalty(net), expected)
            assert torch.equal(at_start._sigma, drawn)
    # without on_epoch_start (a loop of one's own) each penalty draws its own matrices
    assert regularizer().graph_generators() and not at_start.graph_generators()
