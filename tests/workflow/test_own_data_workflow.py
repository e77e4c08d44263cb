"""The README's "Your own data": its configuration, on a generated ProteinGym file with a known
sparse spectrum, runs the real-data experiment and the learned epistasis through the workflow,
and the selected networks' top interactions are the planted ones; with the file's fold columns
it runs ProteinGym's supervised protocol, every held-out fold the file's fold."""

from __future__ import annotations

import re
import shutil
import time

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO
from test_own_data import planted_landscape, write_proteingym

pytestmark = pytest.mark.workflow

WILD, MUTANT = "MKVLATGHDE", "PRWIGSAYNQ"  # 10 sites, 1024 genotypes
PLANTED = {(1,): 0.8, (2, 4): 1.0, (0, 3, 5): -0.7, (6, 9): 0.5}


def readme_config() -> dict:
    """The README section's example configuration (its one YAML block)."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Your own data") : text.index("## Read more")]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    return yaml.safe_load(block)


def test_readme_configuration_learns_the_planted_interactions(tmp_path, snakemake):
    config = readme_config()
    name = next(iter(config["real"]["datasets"]))
    entry = config["real"]["datasets"][name]
    write_proteingym(tmp_path / entry["file"], planted_landscape(WILD, MUTANT, PLANTED))
    # The README's settings at test scale: one split, one seed, a small grid; mutated-site
    # bits, whose spectrum is the planted one.
    config["real"].update(
        data_seeds=1,
        seeds=[0],
        baselines={"lasso": {"alpha": [0.01]}},
        training={"epochs": 120, "batch_size": 32, "lr": 0.01, "patience": 30, "width": 2},
        methods={"standard": {}, "hashwh": {"b": [4], "lam": [0.001]}},
    )
    entry.update(binarization="mutated", train_sizes=[500])
    del entry["protocol"], entry["folds"]  # the protocol's run is the test below
    config["epistasis"]["top"] = len(PLANTED) + 1
    config["device"] = "cpu"
    path = tmp_path / "my_dms.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake("--cores", "2", "--configfile", str(path), workdir=tmp_path)

    root = tmp_path / "results" / config["run_name"]
    for figure in (
        "fig5a_real_r2",
        "fig5b_real_runtime",
        "figA7_real_r2_times",
        f"epistasis_{name}",
    ):
        assert (root / "figures" / f"{figure}.png").stat().st_size > 0
    report = (root / "claims.md").read_text()  # a run of only one's own data: the comparison
    assert "which method predicts it best" in report and "not evaluated" not in report
    top = pd.read_parquet(root / "tables" / f"epistasis_{name}.parquet")
    planted = {" x ".join(f"site{i + 1}" for i in sites) for sites in PLANTED}
    assert set(top["method"]) == {"standard", "hashwh"}
    for _, rows in top.groupby("method"):
        assert set(rows["interaction"].head(len(PLANTED))) == planted, rows
        assert rows["test_r2_retrained"].iloc[0] == pytest.approx(
            rows["test_r2_selected"].iloc[0], abs=1e-4
        )
    site_sets = pd.read_parquet(root / "tables" / f"epistasis_sites_{name}.parquet")
    for _, rows in site_sets.groupby("method"):  # the strongest pair of sites is the planted one
        assert rows[rows["degree"] == 2]["sites"].iloc[0] == "3,5", rows
    assert "each feature a site" in top["basis"].iloc[0]
    energy = pd.read_parquet(root / "tables" / f"epistasis_energy_{name}.parquet")
    assert set(energy[energy["fraction"] > 0.05]["degree"]) == {1, 2, 3}


def test_readme_configuration_runs_proteingyms_protocol_on_the_files_folds(tmp_path, snakemake):
    config = readme_config()
    name = next(iter(config["real"]["datasets"]))
    entry = config["real"]["datasets"][name]
    assert entry["protocol"] == "proteingym" and entry["folds"] == ["fold_random_5"]
    # The README's comment: a table whose file has the single-mutant schemes' columns adds them.
    entry["folds"] += ["fold_modulo_5", "fold_contiguous_5"]
    path = write_proteingym(tmp_path / entry["file"], planted_landscape(WILD, MUTANT, PLANTED))
    table = pd.read_csv(path, keep_default_na=False)
    rng = np.random.default_rng(0)
    for scheme in entry["folds"]:  # the file's folds (arbitrary here): used as they are
        table[scheme] = rng.permutation(np.arange(len(table)) % 5)
    table.to_csv(path, index=False)
    # At test scale: two of the schemes, one seed, a short training, the curve at one size,
    # no epistasis.
    config["real"].update(
        data_seeds=1,
        seeds=[0],
        baselines={"lasso": {"alpha": [0.001, 0.01]}},
        training={"epochs": 40, "batch_size": 32, "lr": 0.01, "patience": 10, "width": 2},
        methods={"standard": {}, "hashwh": {"b": [4], "lam": [0.001]}},
    )
    entry.update(binarization="mutated", train_sizes=[300], folds=entry["folds"][:2])
    config.update(device="cpu", epistasis={"enabled": False})
    (tmp_path / "my_dms.yaml").write_text(yaml.safe_dump(config))
    start = time.perf_counter()
    snakemake("--cores", "2", "--configfile", str(tmp_path / "my_dms.yaml"), workdir=tmp_path)
    print(f"workflow: {time.perf_counter() - start:.0f}s")

    root = tmp_path / "results" / config["run_name"]
    assert (root / "figures" / "proteingym_spearman.png").stat().st_size > 0
    protocol = pd.read_parquet(root / "tables" / f"proteingym_{name}.parquet")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        summary = ["scheme", "method", "spearman_mean", "spearman_se", "mse_mean", "r2_mean"]
        print(protocol.drop_duplicates(["scheme", "method"])[[*summary, "folds"]])
    assert set(protocol["scheme"]) == {"fold_random_5", "fold_modulo_5"}
    assert set(protocol["method"]) == {"standard", "hashwh", "lasso"}
    for (scheme, fold), rows in protocol.groupby(["scheme", "fold"]):
        assert set(rows["test_size"]) == {(table[scheme] == fold).sum()}  # the file's fold
        assert set(rows["train_size"] + rows["val_size"]) == {(table[scheme] != fold).sum()}
    assert (protocol["folds"] == 5).all() and protocol["spearman_se"].notna().all()
    best = protocol.groupby("scheme")["spearman_mean"].max()
    assert (best > 0.5).all(), best  # a planted landscape: the best method ranks it well
    report = (root / "claims.md").read_text()
    assert (
        "## Whole-table protocol on ProteinGym's folds" in report and "not evaluated" not in report
    )


def test_the_own_data_test_case_runs_where_its_table_is(tmp_path, snakemake):
    """.test/own_data, as its header says to run it: its table in an empty folder, its
    configuration; the networks, a baseline, the learned epistasis and ProteinGym's protocol."""
    case = REPO / ".test" / "own_data"
    shutil.copy(case / "my_dms.csv", tmp_path)
    snakemake("--cores", "2", "--configfile", str(case / "config.yaml"), workdir=tmp_path)
    root = tmp_path / "results" / "own_data"
    assert "not evaluated" not in (root / "claims.md").read_text()
    for figure in ("epistasis_my_dms", "proteingym_spearman", "fig5a_real_r2"):
        assert (root / "figures" / f"{figure}.png").stat().st_size > 0, figure
