import pytest
import torch

from whcore import fwht, hadamard_matrix
from whcore.core.wht import all_inputs, bits_to_int, degree, degrees, int_to_bits


@pytest.mark.parametrize("m", range(14))
def test_fwht_equals_dense_product(m):
    gen = torch.Generator().manual_seed(100 + m)
    x = torch.randn(3, 2**m, dtype=torch.float64, generator=gen)
    h = hadamard_matrix(m)
    for normalize in (False, True):
        dense = x @ (hadamard_matrix(m, normalize=True) if normalize else h)
        fast = fwht(x, normalize=normalize)
        rel = (fast - dense).norm() / dense.norm()
        assert rel < 1e-12, (m, normalize, rel)


def test_batched_shapes_and_dtypes():
    x = torch.randn(2, 3, 4, 32)
    y = fwht(x)
    assert y.shape == x.shape and y.dtype == torch.float32
    ref = x.reshape(-1, 32).double() @ hadamard_matrix(5)
    assert torch.allclose(y.reshape(-1, 32).double(), ref, atol=1e-4)


def test_orthonormal_transform_is_an_involution():
    x = torch.randn(5, 256, dtype=torch.float64)
    assert torch.allclose(fwht(fwht(x, normalize=True), normalize=True), x, atol=1e-12)
    assert torch.allclose(fwht(fwht(x)), 256 * x, atol=1e-9)


def test_hadamard_matches_sylvester_definition():
    h = hadamard_matrix(3)
    for i in range(8):
        for j in range(8):
            assert h[i, j] == (-1) ** bin(i & j).count("1")


def test_gradcheck():
    x = torch.randn(2, 16, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: fwht(t), (x,))
    assert torch.autograd.gradcheck(lambda t: fwht(t, normalize=True), (x,))


def test_bad_inputs():
    with pytest.raises(ValueError, match="2\\^m"):
        fwht(torch.zeros(3, 12))
    with pytest.raises(TypeError, match="floating"):
        fwht(torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError):
        fwht([1.0, 2.0])


def test_enumeration_is_msb_first():
    x = all_inputs(3)
    assert x[1].tolist() == [0, 0, 1] and x[4].tolist() == [1, 0, 0]
    assert bits_to_int(x).tolist() == list(range(8))
    assert int_to_bits(torch.tensor(6), 3).tolist() == [1, 1, 0]


def test_degrees():
    assert degrees(3).tolist() == [0, 1, 1, 2, 1, 2, 2, 3]
    assert degree(torch.tensor([0, 255, 1 << 40])).tolist() == [0, 8, 1]


@pytest.mark.gpu
def test_cuda_matches_cpu():
    x = torch.randn(4, 1024, dtype=torch.float64)
    assert torch.allclose(fwht(x.cuda()).cpu(), fwht(x), atol=1e-9)


@pytest.mark.parametrize("m", [1, 6, 7, 8, 13, 14, 15, 16])
def test_float32_kronecker_path_matches_butterflies(m):
    from whcore.core.wht import butterflies

    x = torch.randn(2, 2**m, generator=torch.Generator().manual_seed(m))
    ref = butterflies(x.double())
    assert torch.allclose(fwht(x).double(), ref, rtol=1e-5, atol=1e-5 * 2 ** (m / 2))
    x.requires_grad_(True)
    fwht(x, normalize=True).mul(ref.float()).sum().backward()  # adjoint = same transform
    assert torch.allclose(
        x.grad.double(), fwht(ref, normalize=True), rtol=1e-4, atol=1e-4 * 2 ** (m / 2)
    )


@pytest.mark.gpu
def test_cuda_float32_matches_cpu():
    x = torch.randn(4, 2**12)
    y = fwht(x.cuda().requires_grad_(True))
    assert torch.allclose(y.detach().cpu(), fwht(x), rtol=1e-4, atol=1e-3)
