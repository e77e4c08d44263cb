"""The learned epistasis in sites (whcore.pipeline.analyses.epistasis): one-hot features grouped by
site, within-site contrasts reported apart from the interactions, site sets and their energies
against a slow reference, and the figure's legend clear of its bars."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from whcore.data import own_data
from whcore.pipeline.analyses.epistasis import (
    BETWEEN,
    WITHIN,
    SiteMap,
    energy_by_degree,
    energy_by_site_set,
    network_spectrum,
    top_interactions,
)

WILD, MUTANTS = "MKVL", ("PRW", "GSA")  # 4 sites, 3 residues each: 12 one-hot features


def onehot_names(tmp_path):
    """The one-hot features of a ProteinGym table of every sequence over the residues above,
    as the binarization names them (``site2=R``; ``site2=mutated`` in place of the wild type K)."""
    options = [sorted({WILD[k], MUTANTS[0][k % 3], MUTANTS[1][k % 3]}) for k in range(4)]
    rows = []
    for seq in itertools.product(*options):
        mutant = ":".join(f"{WILD[k]}{k + 1}{r}" for k, r in enumerate(seq) if r != WILD[k])
        rows.append((mutant, 0.0))
    path = tmp_path / "dms.csv"
    pd.DataFrame(rows, columns=["mutant", "DMS_score"]).to_csv(path, index=False)
    frame = own_data.parse(path, {"format": "proteingym"}).frame
    return [c for c in frame.columns if c != "y"]


class Planted(torch.nn.Module):
    """A function of the one-hot bits: a two-site interaction between sites 2 and 4, weaker
    main effects, and a large within-site term (two residues of site 3 at once: never 1 on a
    sequence, yet a big coefficient of the binary cube)."""

    def __init__(self, names):
        super().__init__()
        self.k = {name: i for i, name in enumerate(names)}
        self.scale = torch.nn.Parameter(torch.ones((), dtype=torch.float64))

    def forward(self, x):
        x = x.to(torch.float64)
        k = self.k
        pair = x[:, k["site2=R"]] * x[:, k["site4=P"]] - x[:, k["site2=S"]] * x[:, k["site4=G"]]
        within = x[:, k["site3=A"]] * x[:, k["site3=W"]]
        main = 0.3 * x[:, k["site1=mutated"]] - 0.2 * x[:, k["site3=A"]]
        return self.scale * (2.0 * pair + 6.0 * within + main)


def spectrum_of(tmp_path):
    names = onehot_names(tmp_path)
    bits, coefs, how = network_spectrum(Planted(names), len(names))
    assert how == "exact"
    return names, bits, coefs


def test_the_features_of_one_site_share_it(tmp_path):
    names = onehot_names(tmp_path)
    sites = SiteMap(names)
    assert sites.onehot and sites.sites == ["site1", "site2", "site3", "site4"]
    assert [sites.sites[k] for k in sites.of_feature] == [n.split("=")[0] for n in names]
    mutated = SiteMap(["site2", "site5"])
    assert not mutated.onehot and mutated.sites == ["site2", "site5"]
    assert "within-site" in sites.basis and "each feature a site" in mutated.basis


def test_a_planted_pair_of_sites_ranks_first_and_no_within_site_term_is_an_interaction(tmp_path):
    names, bits, coefs = spectrum_of(tmp_path)
    sites = SiteMap(names)
    top = top_interactions(bits, coefs, names, 10, sites)
    between = top[top["kind"] == BETWEEN]
    within = top[top["kind"] == WITHIN]
    # The largest coefficient of the cube is the within-site term: reported apart.
    assert within["interaction"].iloc[0] == "site3=A x site3=W"
    assert abs(within["coefficient"].iloc[0]) == pytest.approx(1.5)
    interactions = between[between["degree"] > 1]
    assert set(interactions["interaction"].head(2)) == {  # equal coefficients: either order
        "site2=R x site4=P",
        "site2=S x site4=G",
    }
    for interaction in between["interaction"]:
        features = interaction.split(" x ")
        site_names = [f.split("=")[0] for f in features]
        assert len(set(site_names)) == len(site_names), interaction
    assert (between["degree"] == between["features"]).all()
    within = within[within["coefficient"].abs() > 1e-9]  # the within-site term's own
    assert set(within["sites"]) <= {"3", "1,3", "2,3", "3,4", "1,2,3", "1,3,4", "2,3,4", "1,2,3,4"}

    site_sets = energy_by_site_set(bits, coefs, sites)
    assert site_sets[site_sets["degree"] > 1]["sites"].iloc[0] == "2,4"


def test_site_set_energies_match_a_slow_reference(tmp_path):
    names, bits, coefs = spectrum_of(tmp_path)
    sites = SiteMap(names)
    site_of = [name.split("=")[0][4:] for name in names]
    reference: dict[str, float] = {}
    within_energy = total = 0.0
    for row, c in zip(bits, coefs):
        members = [site_of[i] for i in np.flatnonzero(row)]
        if not members:
            continue
        total += c**2
        if len(set(members)) < len(members):
            within_energy += c**2
            continue
        key = ",".join(sorted(members, key=int))
        reference[key] = reference.get(key, 0.0) + c**2
    table = energy_by_site_set(bits, coefs, sites).set_index("sites")
    assert set(table.index) == {k for k, v in reference.items() if v > 0}
    for key, energy in reference.items():
        if energy > 0:
            assert table.loc[key, "energy"] == pytest.approx(energy, rel=1e-9)
            assert table.loc[key, "degree"] == key.count(",") + 1
    degrees = energy_by_degree(bits, coefs, len(names), sites)
    assert degrees.loc[degrees["kind"] == WITHIN, "energy"].sum() == pytest.approx(within_energy)
    assert degrees["fraction"].sum() == pytest.approx(1.0)
    assert degrees.loc[degrees["kind"] == BETWEEN, "energy"].sum() == pytest.approx(
        total - within_energy
    )


def test_mutated_sites_keep_their_terms():
    """Features that are sites (mutated binarization): every term is between sites."""
    n = 5
    bits = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.uint8)
    rng = np.random.default_rng(0)
    coefs = rng.normal(size=len(bits))
    names = [f"site{k + 1}" for k in range(n)]
    top = top_interactions(bits, coefs, names, 5)
    assert set(top["kind"]) == {BETWEEN} and (top["degree"] == top["features"]).all()
    sets = energy_by_site_set(bits, coefs, SiteMap(names))
    assert len(sets) == 2**n - 1


def _figure_tables(tmp_path, hashwh_scale: float = 0.5):
    names, bits, coefs = spectrum_of(tmp_path)
    sites = SiteMap(names)
    identity = {"dataset": "mine", "spectrum": "exact", "basis": sites.basis}
    scales = (("standard", 1.0), ("hashwh", hashwh_scale))
    energy = pd.concat(
        [
            energy_by_degree(bits, s * coefs, len(names), sites).assign(method=m, **identity)
            for m, s in scales
        ]
    )
    site_sets = pd.concat(
        [energy_by_site_set(bits, s * coefs, sites).assign(method=m, **identity) for m, s in scales]
    )
    return {"epistasis_energy_mine": energy, "epistasis_sites_mine": site_sets}


def test_the_figure_states_the_basis_and_its_legend_covers_no_bar(tmp_path):
    from whcore.pipeline.figures.epistasis import epistasis_figure, pair_matrix

    tables = _figure_tables(tmp_path)
    fig = epistasis_figure(tables, {"dataset": "mine", "title": "Mine"})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    bars = fig.axes[0].patches
    assert bars and not any(box.overlaps(bar.get_window_extent(renderer)) for bar in bars)
    assert not box.overlaps(fig.axes[0].get_window_extent(renderer))
    assert "within sites, not shown" in legend.get_texts()[0].get_text()
    assert "basis: Walsh-Hadamard" in fig._suptitle.get_text()
    sites, matrix = pair_matrix(tables["epistasis_sites_mine"].query("method == 'standard'"))
    assert sites == sorted(sites, key=int) and {"2", "4"} <= set(sites)
    np.testing.assert_array_equal(np.nan_to_num(matrix), np.nan_to_num(matrix.T))
    two, four = sites.index("2"), sites.index("4")
    assert np.nanargmax(matrix) in (two * len(sites) + four, four * len(sites) + two)


def _texts(fig) -> str:
    fig.canvas.draw()
    texts = [t.get_text() for t in fig.texts] + [t.get_text() for t in fig.legends[0].get_texts()]
    return "\n".join(texts + [t.get_text() for ax in fig.axes for t in ax.texts])


def test_the_figure_shows_each_networks_energy_and_says_when_it_is_almost_none(tmp_path):
    """Shares alone draw a network of almost no energy as full as one of much: the total
    energy is shown for both, and the panel of the one with 0.16% of the other's says so."""
    from whcore.pipeline.figures.epistasis import epistasis_figure

    tables = _figure_tables(tmp_path, hashwh_scale=0.04)
    energy = tables["epistasis_energy_mine"].groupby("method")["energy"].sum()
    assert energy["hashwh"] == pytest.approx(0.0016 * energy["standard"])
    text = _texts(epistasis_figure(tables, {"dataset": "mine", "title": "Mine"}))
    for method in ("standard", "hashwh"):
        assert f"total energy {energy[method]:.3g}" in text
    assert text.count("almost no energy") == 1 and "0.2% of Standard" in text
    balanced = _texts(epistasis_figure(_figure_tables(tmp_path), {"dataset": "mine"}))
    assert "almost no energy" not in balanced  # a quarter of the other's is not almost none


@pytest.mark.parametrize(("run", "labelled"), [("quick", True), ("paper", False)])
def test_the_figure_carries_the_run_label_every_figure_carries(tmp_path, run, labelled):
    from whcore.pipeline.figures.epistasis import epistasis_figure

    fig = epistasis_figure(_figure_tables(tmp_path), {"dataset": "mine", "run_name": run})
    assert (f"run '{run}': not the paper's configuration" in _texts(fig)) is labelled
