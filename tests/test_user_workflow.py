"""The README's "Your own data": its configuration, on a generated ProteinGym file with a known
sparse spectrum, runs the real-data experiment and the learned epistasis through the workflow,
and the selected networks' top interactions are the planted ones."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml
from conftest import REPO
from test_user_datasets import planted_landscape, write_proteingym

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
        data_seeds=1, seeds=[0], baselines={"lasso": {"alpha": [0.01]}},
        training={"epochs": 120, "batch_size": 32, "lr": 0.01, "patience": 30, "width": 2},
        methods={"standard": {}, "hashwh": {"b": [4], "lam": [0.001]}},
    )  # fmt: skip
    entry.update(binarization="mutated", train_sizes=[500])
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
