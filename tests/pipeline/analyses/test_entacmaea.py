"""Figure 5d: the exact Entacmaea spectrum, its top coefficients and energy per degree."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import figure_spec

from whcore import hadamard_matrix
from whcore.core.io import read_parquet_metadata
from whcore.core.wht import all_inputs
from whcore.pipeline.analyses.entacmaea_energy import energy_by_degree, spectrum, top_coefficients
from whcore.pipeline.cli import main
from whcore.pipeline.figures.entacmaea_energy import energy_figure

pytestmark = pytest.mark.usefixtures("no_network")

# The authors' notebook (experiments/entacmaea.ipynb): energy per degree of the 100 largest
# coefficients without the constant, in the orthonormal scaling (= 2^13 G^2), float32 data.
REFERENCE_ENERGY = {1: 178.968665, 2: 957.900985, 3: 76.739942, 4: 37.457626, 5: 6.183025}


def toy_frame(seed=0) -> tuple[pd.DataFrame, dict[int, float]]:
    """g(x) = sum_f G(f) (-1)^<f, x> on {0,1}^4 with known G, rows shuffled."""
    coefficients = {0: 0.3, 0b1010: 1.5, 0b0001: -0.7, 0b0111: 0.2}
    x = all_inputs(4, torch.int64)
    parity = {
        f: (x & torch.tensor([(f >> k) & 1 for k in (3, 2, 1, 0)])).sum(1) % 2 for f in coefficients
    }
    y = sum(c * (1.0 - 2.0 * parity[f].double()) for f, c in coefficients.items())
    frame = pd.DataFrame(x.numpy(), columns=["a", "b", "c", "d"]).assign(y=y.numpy())
    return frame.sample(frac=1, random_state=seed), coefficients


def test_spectrum_recovers_known_coefficients_from_shuffled_rows():
    frame, coefficients = toy_frame()
    expected = torch.zeros(16, dtype=torch.float64)
    for f, c in coefficients.items():
        expected[f] = c
    torch.testing.assert_close(spectrum(frame), expected)


def test_top_coefficients_and_energy_by_degree():
    frame, _ = toy_frame()
    g = spectrum(frame)
    best = top_coefficients(g, 2, names=["a", "b", "c", "d"])
    assert best[["frequency", "bits", "degree", "features"]].values.tolist() == [
        [10, "1010", 2, "a+c"],
        [1, "0001", 1, "d"],
    ]
    np.testing.assert_allclose(best["energy"], [2.25, 0.49])
    table = energy_by_degree(g, best)
    assert table["top_count"].tolist() == [0, 1, 1, 0, 0]
    np.testing.assert_allclose(table["top_fraction"], [0, 0.49 / 2.74, 2.25 / 2.74, 0, 0])
    np.testing.assert_allclose(table["all_energy"], [0, 0.49, 2.25, 0.04, 0])  # constant left out
    with_constant = top_coefficients(g, 2, include_constant=True)
    assert with_constant["frequency"].tolist() == [10, 1]
    assert top_coefficients(g, 3, include_constant=True)["frequency"].tolist() == [10, 1, 0]


def test_incomplete_landscape_is_refused():
    frame, _ = toy_frame()
    with pytest.raises(ValueError, match="all 2\\^4 = 16 genotypes"):
        spectrum(frame.iloc[1:])


def test_real_spectrum_matches_dense_transform(real_dataset):
    frame = real_dataset("entacmaea").frame
    y = torch.tensor(frame["y"].to_numpy())  # rows are in MSB-first order (see test_datasets)
    # H_13 = H_6 (x) H_7 (Kronecker): with the 6 high bits as rows, H_13 y = H_6 Y H_7. This
    # avoids the 512 MiB dense H_13 and is independent of the butterflies.
    dense = (hadamard_matrix(6) @ y.reshape(64, 128) @ hadamard_matrix(7)).reshape(-1) / 2**13
    torch.testing.assert_close(spectrum(frame), dense, rtol=1e-10, atol=1e-13)
    assert spectrum(frame)[0].item() == pytest.approx(frame["y"].mean())  # G(0) is the mean


def test_cli_energy_table_matches_the_authors_numbers_and_draws_the_figure(
    real_dataset, tmp_path, capsys
):
    data = real_dataset("entacmaea").parquet
    table_path, coef_path = tmp_path / "tables" / "energy.parquet", tmp_path / "top.parquet"
    spec = {
        "data": str(data),
        "top": 100,
        "outputs": {"table": str(table_path), "coefficients": str(coef_path)},
    }
    assert main(["entacmaea-energy", "--spec", json.dumps(spec)]) == 0
    table = pd.read_parquet(table_path)
    assert table["degree"].tolist() == list(range(14))
    assert table["top_count"].tolist() == [0, 8, 21, 38, 26, 7] + [0] * 8
    for d, energy in REFERENCE_ENERGY.items():
        assert table.loc[d, "top_energy"] * 2**13 == pytest.approx(energy, rel=2e-6)
    assert table["top_fraction"].sum() == pytest.approx(1.0)
    top = pd.read_parquet(coef_path)
    assert len(top) == 100 and top["frequency"].is_unique and 0 not in top["frequency"].values
    assert top["features"].iloc[0] == "F5S+Y10R"  # the strongest epistatic pair
    assert read_parquet_metadata(table_path)["top"] == 100
    assert "2: 76.2%" in capsys.readouterr().out

    stem = tmp_path / "figures" / "fig5d_entacmaea_energy"
    assert (
        main(
            [
                "figure",
                "--spec",
                figure_spec("fig5d_entacmaea_energy", stem),
                "--tables",
                str(table_path),
            ]
        )
        == 0
    )
    assert stem.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
    assert stem.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_figure_refuses_a_table_of_another_kind(tmp_path):
    table = tmp_path / "other.parquet"
    pd.DataFrame({"degree": [1], "energy": [1.0]}).to_parquet(table)
    with pytest.raises(ValueError, match="not an entacmaea-energy table"):
        energy_figure({"entacmaea_energy": pd.read_parquet(table)}, {})
