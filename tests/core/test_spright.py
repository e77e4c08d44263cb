"""SPRIGHT sparse WHT recovery: the design, exactness against the dense FWHT, recovery rates."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from whcore.core import spright, sprightdesign
from whcore.core.models import MLP
from whcore.core.spectrum import exact_spectrum
from whcore.core.wht import all_inputs, fwht, int_to_bits


def random_spectrum(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """k distinct uniform frequencies (k, n) and amplitudes of magnitude in [0.5, 1]."""
    rng = np.random.default_rng(seed)
    bits = np.unique(rng.integers(0, 2, (2 * k, n), dtype=np.uint8), axis=0)
    bits = bits[rng.permutation(len(bits))[:k]]
    return bits, rng.uniform(0.5, 1.0, k) * rng.choice([-1.0, 1.0], k)


def evaluator(bits: np.ndarray, amps: np.ndarray, noise: float = 0.0, seed: int = 0):
    """x (N, n) 0/1 -> sum_k amps_k (-1)^<k, x> (+ Gaussian noise)."""
    freqs = bits.astype(np.float32).T
    rng = np.random.default_rng(seed)

    def f(x):
        parity = (x.astype(np.float32) @ freqs).astype(np.int64) % 2
        return (1 - 2 * parity) @ amps + noise * rng.standard_normal(len(x))

    return f


def truth(bits, amps) -> dict[int, float]:
    return spright.Recovery(bits, amps).as_dict()


def exact_match(found: dict, expected: dict, tol: float = 1e-8) -> bool:
    return set(found) == set(expected) and all(abs(found[k] - expected[k]) <= tol for k in expected)


# --- the sampling design -------------------------------------------------------------------------


@pytest.mark.parametrize("n,m,d", [(13, 4, 3), (40, 5, 2), (8, 8, 1)])
def test_sample_count_before_dedup(n, m, d):
    des = spright.SprightDesign(n, m, d, seed=3)
    assert des.n_samples == 3 * 2**m * (2 * n * d + 1)
    assert des.inverse.shape == (3, 2**m, 2 * n * d + 1)
    assert len(des.points) <= des.n_samples
    assert len(np.unique(des.points, axis=0)) == len(des.points)


def test_design_locations_and_delays():
    n, m, d = 11, 4, 2
    des = spright.SprightDesign(n, m, d, seed=7)
    assert not des.delays[:, 0].any()  # the zero delay first
    # Pair r of bit q: (a, a xor e_q) at positions 1 + 2 (q d + r) and 2 + 2 (q d + r).
    flips = des.delays[:, 1::2] ^ des.delays[:, 2::2]
    expected = np.repeat(np.eye(n, dtype=np.uint8), d, axis=0)
    assert (flips == expected[None]).all()
    # Every sample is A_c^T l + d_p (mod 2), l's bits MSB-first.
    ell = int_to_bits(torch.arange(2**m), m).numpy()
    for c in range(3):
        base = ell @ des.hashes[c] % 2  # (B, n)
        want = base[:, None, :] ^ des.delays[c][None]
        assert (des.points[des.inverse[c]] == want).all()
    assert all(sprightdesign._gf2_rank(a) == m for a in des.hashes)


def test_design_is_a_deterministic_value_object():
    a, b = spright.SprightDesign(30, 5, 3, seed=1), spright.SprightDesign(30, 5, 3, seed=1)
    assert a == b and hash(a) == hash(b)
    assert (a.points == b.points).all() and (a.hashes == b.hashes).all()
    c = spright.SprightDesign(30, 5, 3, seed=2)
    assert a != c and not (a.hashes == c.hashes).all()
    assert spright.design(30, 5, 3, 1) is spright.design(30, 5, 3, 1)  # cached


@pytest.mark.parametrize("n,m,d", [(5, 6, 3), (5, 0, 3), (5, 3, 0), (0, 1, 1)])
def test_bad_sizes_raise(n, m, d):
    with pytest.raises(ValueError, match="SPRIGHT"):
        spright.SprightDesign(n, m, d)
    with pytest.raises(ValueError, match="SPRIGHT"):
        spright.sparse_wht(lambda x: np.zeros(len(x)), n, m, d)


def test_wrong_output_shape_raises():
    with pytest.raises(ValueError, match=r"must map \(\d+, 10\) inputs"):
        spright.sparse_wht(lambda x: np.zeros((len(x), 2)), 10, 4)
    with pytest.raises(ValueError, match="one value per sample location"):
        spright.decode(spright.design(10, 4), np.zeros(3))
    with pytest.raises(ValueError, match="decoder"):
        spright.sparse_wht(lambda x: np.zeros(len(x)), 10, 4, decoder="fast")
    with pytest.raises(ValueError, match="noise_sd"):
        spright.sparse_wht(lambda x: np.zeros(len(x)), 10, 4, noise_sd=-1.0)


def test_synthesize_equals_direct_evaluation():
    des = spright.design(20, 5, 2, seed=4)
    bits, amps = random_spectrum(20, 12, seed=5)
    np.testing.assert_allclose(
        des.synthesize(bits, amps), evaluator(bits, amps)(des.points), atol=1e-12
    )


# --- exactness ------------------------------------------------------------------------------------


def dense_spectrum(f, n: int) -> dict[int, float]:
    """The exact reference: fwht of all 2^n values / 2^n, nonzeros only."""
    values = torch.as_tensor(f(all_inputs(n).numpy().astype(np.uint8)), dtype=torch.float64)
    spectrum = fwht(values) / 2**n
    return {int(i): float(spectrum[i]) for i in torch.nonzero(spectrum.abs() > 1e-12).flatten()}


@pytest.mark.parametrize("seed", range(4))
def test_matches_dense_fwht(seed):
    n, m = 12, 5
    f = evaluator(*random_spectrum(n, 24, seed=seed))
    assert exact_match(spright.sparse_wht(f, n, m, seed=seed), dense_spectrum(f, n))


def test_frequency_convention_single_coefficient():
    n = 9
    k = 0b100000011  # bits 0, 7, 8 MSB-first: k_0 = 1, k_7 = 1, k_8 = 1

    def f(x):
        return 2.5 * (-1.0) ** (x[:, 0] + x[:, 7] + x[:, 8])

    assert exact_match(spright.sparse_wht(f, n, 3), {k: 2.5})
    assert spright.sparse_wht(lambda x: np.zeros(len(x)), n, 3) == {}


def test_options_refit_and_reference_decoder_exact_when_sparse():
    n, m = 30, 6
    bits, amps = random_spectrum(n, 8, seed=11)
    expected, f = truth(bits, amps), evaluator(bits, amps)
    assert exact_match(spright.sparse_wht(f, n, m, refit=False), expected)
    assert exact_match(spright.sparse_wht(f, n, m, noise_sd=0.0), expected)
    # The reference decoder has no noise threshold: bins holding only rounding dust may add
    # frequencies, whose least-squares values are dust too; the true support is exact.
    found = spright.sparse_wht(f, n, m, decoder="reference")
    assert exact_match({k: v for k, v in found.items() if abs(v) > 1e-9}, expected)
    assert all(abs(v) <= 1e-9 for k, v in found.items() if k not in expected)


def test_the_reference_decoder_has_no_noise_threshold():
    """A coefficient far below the robust decoder's noise floor is still found by the
    reference decoder (it detects every non-zero bin), as the EN-S authors' code did."""
    n, m = 12, 4
    bits, amps = random_spectrum(n, 3, seed=5)
    amps[0] = 1e-9  # below RELATIVE_FLOOR times the others
    expected, f = truth(bits, amps), evaluator(bits, amps)
    robust = spright.sparse_wht(f, n, m)
    reference = spright.sparse_wht(f, n, m, decoder="reference")
    weak = next(k for k, v in expected.items() if abs(v) < 1e-6)
    assert weak not in robust and weak in reference


def test_torch_module_and_column_output():
    """A network is sampled with float inputs; its largest coefficients match the exact ones."""
    n = 10
    net = MLP(n, width=4, seeds=0, dtype=torch.float64)
    exact = exact_spectrum(net, n)
    found = spright.sparse_wht(net, n, 6, seed=0)
    top = torch.argsort(exact.abs(), descending=True)[:5].tolist()
    for k in top:  # the network's small tail acts as noise on the bins
        assert abs(found[k] - float(exact[k])) < 0.02 * float(exact.abs().max())
    column = spright.sparse_wht(
        lambda x: net(torch.as_tensor(x, dtype=torch.float64))[:, None].detach(), n, 6, seed=0
    )
    assert column.keys() == found.keys()


# --- recovery rates -------------------------------------------------------------------------------

# (n, m, sparsities K, trials, floor on the exact-recovery rate per K). K reaches 2^m: peeling
# over 3 stages of 2^m bins succeeds with high probability while K < 0.82 * 3 * 2^m (the 3-core
# threshold of random 3-uniform hypergraphs), so K = 2^m is well inside.
RATES = [
    (13, 7, (32, 64, 128), 10, 0.9),
    (40, 6, (16, 32, 64), 6, 0.8),
    (100, 5, (16, 32), 6, 0.8),
    (236, 4, (8, 16), 5, 0.8),
]


@pytest.mark.parametrize("n,m,sparsities,trials,floor", RATES, ids=[f"n{r[0]}" for r in RATES])
def test_noiseless_recovery_rate(n, m, sparsities, trials, floor):
    hits = dict.fromkeys(sparsities, 0)
    for t in range(trials):
        des = spright.SprightDesign(n, m, 3, seed=t)
        x = des.points.astype(np.float32)  # converted once, shared by the spectra of this trial
        for k in sparsities:
            bits, amps = random_spectrum(n, k, seed=1000 * n + 10 * k + t)
            parity = (x @ bits.astype(np.float32).T).astype(np.int64) % 2
            found = spright.decode(des, (1 - 2 * parity) @ amps).as_dict()
            hits[k] += exact_match(found, truth(bits, amps))
    rates = {k: h / trials for k, h in hits.items()}
    print(
        f"\nSPRIGHT exact recovery n={n} m={m} d=3: "
        + ", ".join(f"K={k}: {r:.2f}" for k, r in rates.items())
    )
    assert all(r >= floor for r in rates.values()), f"rates {rates} below the floor {floor}"


@pytest.mark.parametrize("noise_sd", [None, 0.05])
def test_noisy_recovery(noise_sd):
    """Noise sd 0.05 on every sample, smallest |coefficient| 0.5: the support is exact and every
    coefficient is within 0.01 (the least-squares error is about 0.05 / sqrt(3 2^m P))."""
    n, m, k = 40, 6, 32
    errors = []
    for t in range(4):
        bits, amps = random_spectrum(n, k, seed=500 + t)
        f = evaluator(bits, amps, noise=0.05, seed=t)
        found, expected = spright.sparse_wht(f, n, m, seed=t, noise_sd=noise_sd), truth(bits, amps)
        assert set(found) == set(expected)
        errors.append(max(abs(found[key] - expected[key]) for key in expected))
    assert max(errors) < 0.01, errors


def test_docs_example_runs():
    text = (Path(__file__).resolve().parents[2] / "docs" / "ens.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    scope: dict = {}
    exec(compile(code, "docs/ens.md", "exec"), scope)  # noqa: S102
    np.testing.assert_allclose(scope["values"], scope["f"](scope["des"].points), atol=1e-12)
