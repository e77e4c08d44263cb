import numpy as np
import pytest
import torch

from whcore.core.spectrum import dense_target_spectrum, exact_spectrum, sae, spectral_metrics
from whcore.core.wht import all_inputs, hadamard_matrix
from whcore.data.synthetic import SparseTarget, degree_ladder, random_sparse, sample_inputs


def test_degree_ladder():
    t = degree_ladder(10, 5, seed=0)
    assert t.degrees.tolist() == [1, 2, 3, 4, 5]
    assert np.all(t.amplitudes == 1)
    assert not np.array_equal(t.frequencies, degree_ladder(10, 5, seed=1).frequencies)
    assert np.array_equal(t.frequencies, degree_ladder(10, 5, seed=0).frequencies)


def test_random_sparse():
    t = random_sparse(50, 25, 5, seed=2)
    assert t.k == 25 and t.frequencies.shape == (25, 50)
    assert len({f.tobytes() for f in t.frequencies}) == 25
    assert set(t.degrees.tolist()) <= {1, 2, 3, 4, 5}
    assert np.all(np.abs(t.amplitudes) <= 1)
    with pytest.raises(ValueError, match="k must be"):
        random_sparse(3, 10, 1, seed=0)
    with pytest.raises(ValueError, match="maximum degree"):
        random_sparse(3, 2, 4, seed=0)


def test_target_values_match_its_spectrum():
    """y = (1/k) sum a chi, so the exact WHT of y is the coefficient dict."""
    t = random_sparse(9, 6, 4, seed=5)
    x = all_inputs(9, torch.float64)
    spectrum = (hadamard_matrix(9) @ torch.as_tensor(t(x.numpy()))) / 2**9
    assert torch.allclose(spectrum, dense_target_spectrum(t.coefficients(), 9), atol=1e-12)
    assert torch.allclose(exact_spectrum(lambda z: torch.as_tensor(t(z.numpy())), 9), spectrum)


def test_sample_inputs_distinct_and_deterministic():
    for n, size in [(10, 1024), (10, 300), (60, 5000)]:
        x = sample_inputs(n, size, seed=4)
        assert x.shape == (size, n) and set(np.unique(x)) <= {0, 1}
        assert len({r.tobytes() for r in x}) == size
        assert np.array_equal(x, sample_inputs(n, size, seed=4))
    assert not np.array_equal(sample_inputs(60, 50, 1), sample_inputs(60, 50, 2))
    with pytest.raises(ValueError, match="distinct"):
        sample_inputs(3, 9, seed=0)


def test_target_json_roundtrip(tmp_path):
    t = random_sparse(12, 4, 3, seed=1)
    t.to_json(tmp_path / "t.json")
    u = SparseTarget.from_json(tmp_path / "t.json")
    assert np.array_equal(u.frequencies, t.frequencies) and np.allclose(u.amplitudes, t.amplitudes)
    (tmp_path / "bad.json").write_text('{"n": 3}')
    with pytest.raises(ValueError, match="bad.json"):
        SparseTarget.from_json(tmp_path / "bad.json")


def test_sae_and_metrics():
    target = torch.tensor([0.0, 1.0, 0.0, -1.0])
    assert sae(target, target).item() == 0
    assert sae(torch.zeros(4), target).item() == 1
    learned = torch.tensor([[0.5, 1.0, 0.0, 0.0]])
    m = spectral_metrics(learned, target, 2)
    assert m["sae_support"].item() == pytest.approx(0.5)
    assert m["sae_full"].item() == pytest.approx((0.25 + 1) / 2)
    assert m["energy_deg1"].item() == pytest.approx(1.0)  # frequency 1 = 01, degree 1
    assert m["sae_deg2"].item() == pytest.approx(1.0)  # frequency 3 = 11 missed
    assert m["coef_3"].item() == 0.0
    with pytest.raises(ValueError, match="undefined"):
        sae(learned, torch.zeros(4))
    with pytest.raises(ValueError, match="exceeds"):
        exact_spectrum(lambda z: z.sum(-1), 21)


def test_targets_are_pinned_across_platforms_and_numpy_versions():
    """g* is drawn from whcore's SplitMix64 stream, not NumPy's generators (whose streams
    NumPy does not promise to keep): these draws must never change."""
    assert degree_ladder(10, 5, 0).frequencies.tolist() == [
        [0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
        [0, 0, 1, 1, 0, 0, 0, 1, 0, 0],
        [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
        [1, 0, 0, 1, 0, 1, 1, 0, 1, 0],
    ]
    amplitudes = random_sparse(25, 25, 5, 0).amplitudes[:3]
    assert np.allclose(amplitudes, [-0.45641465, 0.92109006, -0.73211179], atol=1e-8)


def test_stable_random_draws():
    from whcore.core.rng import StableRandom

    rng = StableRandom(7)
    sample = rng.sample(50, 20)
    assert len(set(sample.tolist())) == 20 and sample.max() < 50
    u = StableRandom(7).uniform(-1.0, 1.0, 10000)
    assert -1 <= u.min() and u.max() < 1 and abs(u.mean()) < 0.03
    counts = np.bincount([StableRandom(s).integer(1, 6) for s in range(3000)], minlength=6)
    assert counts[0] == 0 and counts[1:].min() > 500  # each of 1..5 about 600 times
    with pytest.raises(ValueError, match="distinct"):
        StableRandom(0).sample(3, 4)
