"""ProteinGym's supervised protocol on one's own dataset (``protocol: proteingym``): a file's
fold columns survive binarization and are held out exactly, folds are computed where a file
has none (and refused where they cannot be), the jobs of every (scheme, held-out fold, method
group or baseline family), the Spearman correlations recorded against scipy's, and the table
of one dataset's protocol from the records."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_own_data import OWN, planted_landscape, write_proteingym

from whcore.data import own_data
from whcore.data.folds import SCHEMES
from whcore.data.loading import load_table_split
from whcore.data.parsers import RawFormatError
from whcore.pipeline.jobs.spec import DataSplit

pytestmark = pytest.mark.usefixtures("no_network")

WILD, MUTANT = "MKVLATGH", "PRWIGSAY"  # 8 sites, 256 genotypes
PLANTED = {(1,): 0.8, (2, 4): 1.0, (0, 3, 5): -0.7, (6,): 0.4}


def fold_table(path, seed=0):
    """A ProteinGym file of the planted landscape with the three fold columns (random, and two
    arbitrary assignments standing in for modulo and contiguous), every fold non-empty."""
    rows = planted_landscape(WILD, MUTANT, PLANTED)
    write_proteingym(path, rows)
    table = pd.read_csv(path, keep_default_na=False)
    rng = np.random.default_rng(seed)
    for scheme in SCHEMES:
        table[scheme] = rng.permutation(np.arange(len(table)) % 5)
    table.to_csv(path, index=False)
    return table


def binarized(tmp_path, schemes=SCHEMES):
    table = fold_table(tmp_path / "dms.csv")
    out = tmp_path / "mine.parquet"
    settings = {"format": "proteingym", "binarization": "mutated", "folds": list(schemes)}
    own_data.binarize("mine", tmp_path / "dms.csv", out, settings)
    return table, out


def fold_data(path, scheme, fold, standardize=False):
    return {
        "source": "table",
        "path": str(path),
        "data_seed": 0,
        "standardize": standardize,
        "folds": {"scheme": scheme, "fold": fold, "val_fraction": 0.2},
    }


def test_a_held_out_fold_sets_no_scale_of_the_standardized_targets(tmp_path):
    """Standardized with the training folds' rows only: shifting the held-out fold's scores
    moves its own standardized values and no training value."""
    table, out = binarized(tmp_path)
    data, _ = load_table_split(DataSplit.from_dict(fold_data(out, "fold_random_5", 0, True)))
    training = np.concatenate([data.y_train, data.y_val])
    assert abs(training.mean()) < 1e-9 and abs(training.std(ddof=1) - 1) < 1e-9
    shifted = table.assign(DMS_score=table["DMS_score"] + 100 * (table["fold_random_5"] == 0))
    shifted.to_csv(tmp_path / "dms.csv", index=False)
    (tmp_path / "moved").mkdir()
    moved = tmp_path / "moved" / "mine.parquet"  # the same name: the same seeds
    own_data.binarize(
        "mine",
        tmp_path / "dms.csv",
        moved,
        {"format": "proteingym", "binarization": "mutated", "folds": list(SCHEMES)},
    )
    again, _ = load_table_split(DataSplit.from_dict(fold_data(moved, "fold_random_5", 0, True)))
    np.testing.assert_allclose(again.y_train, data.y_train)
    assert again.y_test.mean() > data.y_test.mean() + 10


def test_the_files_fold_columns_are_held_out_exactly(tmp_path):
    table, out = binarized(tmp_path)
    frame = pd.read_parquet(out)
    assert len(frame) == len(table)  # every genotype once: the rows keep the file's order
    np.testing.assert_allclose(frame["y"], table["DMS_score"])
    for scheme in SCHEMES:
        for fold in range(5):
            data, _ = load_table_split(DataSplit.from_dict(fold_data(out, scheme, fold)))
            expected = table[table[scheme] == fold]
            # the held-out rows are exactly the file's rows of that fold (y values distinct
            # enough to tell rows apart only together with their genotype)
            held = pd.DataFrame(data.x_test).assign(y=data.y_test)
            want = frame.loc[expected.index].rename(columns=dict(zip(frame.columns[:-1], range(8))))
            pd.testing.assert_frame_equal(
                held.reset_index(drop=True), want.reset_index(drop=True), check_dtype=False
            )
            assert len(data.y_train) + len(data.y_val) == len(table) - len(expected)
            assert abs(len(data.y_val) - 0.2 * (len(table) - len(expected))) <= 1


def test_folds_are_computed_where_the_file_has_no_column(tmp_path):
    path = tmp_path / "singles.csv"
    path.write_text(
        "mutant,DMS_score\n" + "".join(f"A{p}G,{p * 0.1}\n" for p in range(1, 41)) + "WT,0\n"
    )
    parsed = own_data.parse(path, {"format": "proteingym", "folds": list(SCHEMES)})
    assert parsed.fold_sources == dict.fromkeys(SCHEMES, "computed")
    positions = np.arange(1, 41)
    np.testing.assert_array_equal(parsed.folds["fold_modulo_5"][:40], (positions - 1) % 5)
    np.testing.assert_array_equal(parsed.folds["fold_contiguous_5"][:40], (positions - 1) // 8)
    # the wild type goes to the random scheme's fold of its row
    assert parsed.folds["fold_modulo_5"][40] == parsed.folds["fold_random_5"][40]
    # random: every row's fold drawn uniformly and independently, as ProteinGym draws it
    expected = np.random.default_rng(0).integers(0, 5, 41)
    np.testing.assert_array_equal(parsed.folds["fold_random_5"], expected)


def test_folds_that_cannot_be_had_are_refused_in_one_line(tmp_path):
    path = write_proteingym(tmp_path / "multi.csv", planted_landscape(WILD, MUTANT, PLANTED))
    for scheme in ("fold_modulo_5", "fold_contiguous_5"):
        with pytest.raises(RawFormatError) as err:
            own_data.parse(path, {"format": "proteingym", "folds": ["fold_random_5", scheme]})
        message = str(err.value)
        assert message.startswith(f"{path}: no column {scheme!r}") and "\n" not in message
        assert "multiple mutant" in message and "folds key" in message and "Fix:" in message
    assert own_data.parse(path, {"format": "proteingym", "folds": ["fold_random_5"]}).folds
    table = fold_table(tmp_path / "bad.csv")
    table.loc[3, "fold_random_5"] = 7
    table.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(RawFormatError, match=r"line 5, column 'fold_random_5': '7' is not a fold"):
        own_data.parse(tmp_path / "bad.csv", {"format": "proteingym", "folds": ["fold_random_5"]})


@pytest.mark.parametrize(
    "entry, key, words",
    [
        (
            f"{{mine: {OWN}, file: a.csv, format: proteingym, protocol: proteingym, "
            "folds: [fold_random_5, fold_diagonal_5]}}",
            "real.datasets.mine.folds.1",
            "is not one of",
        ),
        (
            f"{{mine: {OWN}, file: a.csv, format: proteingym, protocol: proteingym, folds: []}}}}",
            "real.datasets.mine.folds",
            "should be non-empty",
        ),
        (
            f"{{mine: {OWN}, file: a.csv, format: proteingym, folds: [fold_random_5]}}}}",
            "real.datasets.mine.folds",
            "add protocol: proteingym",
        ),
        (
            f"{{mine: {OWN}, file: a.csv, format: proteingym, protocol: gym}}}}",
            "real.datasets.mine.protocol",
            "is not one of",
        ),
        (
            f"{{gb1: {OWN}, protocol: proteingym}}}}",
            "real.datasets.gb1.protocol",
            "applies to your own datasets",
        ),
        (
            "{mine: {file: a.csv, format: proteingym}}",
            "real.datasets.mine",
            "'train_sizes' is a required property",
        ),
        (
            "{mine: {train_sizes: [10], file: a.csv, format: proteingym, protocol: proteingym}}",
            "real.datasets.mine",
            "'val_size' is a dependency of 'train_sizes'",
        ),
    ],
)
def test_protocol_keys_are_checked_in_one_line(entry, key, words):
    from test_config import assert_own_dataset_refused

    assert_own_dataset_refused(entry, key, words)


CURVE = OWN.removeprefix("{") + ", "  # the train-size curve's keys of a dataset entry


def protocol_contract(folds="", curve=CURVE, protocol="proteingym"):
    from test_config import changed, validate

    from whcore.pipeline.contract import Contract

    entry = f"{{mine: {{{curve}file: a.csv, format: proteingym, protocol: {protocol}{folds}}}}}"
    config = changed("real.datasets", entry)
    config["real"]["runtime_dataset"] = "mine"
    for experiment in ("spectrum", "synthetic", "ablation", "entacmaea_energy"):
        del config[experiment]
    validate(config)
    return Contract(config)


def test_the_protocol_plans_a_job_per_scheme_fold_and_method_group():
    from whcore.pipeline.analyses.grids import training_groups
    from whcore.pipeline.config import dataset_settings

    contract = protocol_contract(", folds: [fold_random_5, fold_modulo_5]")
    ds = dataset_settings(contract.config, "mine")
    groups, families = len(training_groups(ds["methods"])), len(ds["baselines"])
    train = contract.outputs("train", experiment="proteingym", dataset="mine")
    baselines = contract.outputs("baselines", experiment="proteingym", dataset="mine")
    assert len(train) == 2 * 5 * groups and len(baselines) == 2 * 5 * families
    job = contract.job(train[0])
    assert job.spec.data.train_size is None and job.spec.data.folds.scheme in SCHEMES
    assert "train_size" not in job.spec.to_dict()["data"]
    assert contract.config["real"]["datasets"]["mine"]["folds"] == [
        "fold_random_5",
        "fold_modulo_5",
    ]
    (data,) = [j for j in contract.jobs.values() if j.kind == "binarize_own"]
    assert data.spec.source["folds"] == ["fold_random_5", "fold_modulo_5"]
    table = contract.layout.table_path("proteingym_mine")
    aggregate = contract.job(table)
    assert sorted(aggregate.inputs) == sorted(train + baselines)
    assert table in contract.targets() and "proteingym_spearman" in contract.figures()
    (claims,) = [j for j in contract.jobs.values() if j.kind == "claims"]
    assert table in claims.inputs
    # the train-size curve stays: the real experiment's jobs are there too
    assert contract.outputs("train", experiment="real", dataset="mine")
    # left out, every scheme
    assert protocol_contract().config["real"]["datasets"]["mine"]["folds"] == list(SCHEMES)


def test_spearman_recorded_on_a_held_out_fold_is_scipys(tmp_path):
    from whcore.core.rng import derive_seed
    from whcore.pipeline.aggregation import proteingym_tables
    from whcore.pipeline.analyses.baselines import make_model
    from whcore.pipeline.jobs.baselines import BaselinesSpec, baselines_job

    _, out = binarized(tmp_path, ["fold_random_5"])
    records = []
    for fold in range(5):
        path = tmp_path / f"lasso{fold}.parquet"
        spec = BaselinesSpec.from_dict(
            {
                "dataset": "mine",
                "family": "lasso",
                "grid": {"alpha": [0.001, 0.1]},
                "data": fold_data(out, "fold_random_5", fold, standardize=True),
                "outputs": {"records": str(path)},
            }
        )
        frame = baselines_job(spec, log=lambda _: None)
        data, unit = load_table_split(spec.data)
        seed = derive_seed("baseline", "lasso", unit) % 2**32
        for row in frame.itertuples():
            model = make_model("lasso", {"alpha": row.alpha}, seed)
            model.fit(data.x_train, data.y_train)
            expected = stats.spearmanr(data.y_test, model.predict(data.x_test)).statistic
            assert row.test_spearman == pytest.approx(expected, abs=1e-12)
        assert set(frame["fold"]) == {fold} and set(frame["test_size"]) == {len(data.y_test)}
        frame.to_parquet(path)
        records.append(frame)
    table = proteingym_tables([], [tmp_path / f"lasso{f}.parquet" for f in range(5)])["proteingym"]
    assert list(table["fold"]) == list(range(5))
    records = pd.concat(records, ignore_index=True)
    best = records.loc[records.groupby("fold")["val_r2"].idxmax()]
    np.testing.assert_allclose(table["spearman"], best["test_spearman"])
    assert table["spearman_mean"].iloc[0] == pytest.approx(best["test_spearman"].mean())
    assert table["spearman_se"].iloc[0] == pytest.approx(
        best["test_spearman"].std(ddof=1) / np.sqrt(5)
    )
    assert table["spearman_mean"].iloc[0] > 0.5  # the planted landscape is largely additive


def test_a_network_records_the_spearman_of_its_held_out_fold(tmp_path):
    from whcore.pipeline.jobs.train import TrainSpec, run_job

    _, out = binarized(tmp_path, ["fold_modulo_5"])
    spec = TrainSpec.from_dict(
        {
            "method": "standard",
            "grid": [{}],
            "data": fold_data(out, "fold_modulo_5", 2),
            "training": {"seeds": [0, 1], "epochs": 3, "batch_size": 32, "width": 2},
            "labels": {"experiment": "proteingym", "dataset": "mine"},
            "outputs": {"records": str(tmp_path / "runs")},
        }
    )
    (result,) = run_job(spec, "cpu")
    records = result.records
    assert set(records["scheme"]) == {"fold_modulo_5"} and set(records["fold"]) == {2}
    assert records["test_spearman"].notna().all()
    # at epoch 0 the network is its initialization on the columns that vary over its training
    # rows (the held-out fold's sites never do under the modulo scheme): scipy's Spearman of
    # its predictions
    import torch

    from whcore.core.models import MLP

    data = load_table_split(spec.data)[0].on_varying_columns()
    for row in records[records["epoch"] == 0].itertuples():
        model = MLP(data.n, 2, seeds=[int(row.model_seed)], device=torch.device("cpu"))
        x = torch.as_tensor(data.x_test, dtype=torch.float32)
        prediction = model.predict(x).reshape(-1).numpy()
        expected = stats.spearmanr(data.y_test, prediction).statistic
        assert row.test_spearman == pytest.approx(expected, abs=1e-6)


def test_a_held_out_sites_columns_move_no_network_prediction(tmp_path):
    """Singles under fold_modulo_5: the held-out fold's sites are mutated in no training row, so
    their columns vary only there. The network fits on the other columns, on which every
    held-out single is the wild type: its predictions are one value (no finite Spearman at any
    epoch), where weights on those columns would have ranked the fold by their random start."""
    from whcore.pipeline.jobs.train import TrainSpec, run_job

    path, out = tmp_path / "singles.csv", tmp_path / "mine.parquet"
    path.write_text(
        "mutant,DMS_score\n" + "".join(f"A{p}G,{p * 0.1}\nA{p}C,{p * 0.3}\n" for p in range(1, 21))
    )
    settings = {"format": "proteingym", "binarization": "mutated", "folds": ["fold_modulo_5"]}
    own_data.binarize("mine", path, out, settings)
    spec = TrainSpec.from_dict(
        {
            "method": "standard",
            "grid": [{}],
            "data": fold_data(out, "fold_modulo_5", 2),
            "training": {"seeds": [0], "epochs": 2, "batch_size": 8, "width": 2},
            "labels": {"experiment": "proteingym", "dataset": "mine"},
            "outputs": {"records": str(tmp_path / "runs")},
        }
    )
    whole = load_table_split(spec.data)[0]
    kept = whole.on_varying_columns()  # not the 4 held-out sites (nor sites only validating)
    assert whole.n == 20 and kept.n <= 16 and whole.x_test.any() and not kept.x_test.any()
    (result,) = run_job(spec, "cpu")
    assert len(result.records) == 3 and result.records["test_spearman"].isna().all()


def test_a_hash_size_above_the_columns_a_fold_varies_is_refused(tmp_path):
    from whcore.pipeline.jobs.train import TrainSpec, run_job

    _, out = binarized(tmp_path, ["fold_modulo_5"])
    data = fold_data(out, "fold_modulo_5", 2)
    varying = load_table_split(TrainSpec.from_dict(_hashwh_spec(data, 1, tmp_path)).data)[0]
    n = varying.on_varying_columns().n
    spec = TrainSpec.from_dict(_hashwh_spec(data, n + 1, tmp_path))
    with pytest.raises(
        ValueError, match=rf"{n} of its \d+ columns vary .* fold_modulo_5 fold 2.*b <= {n}"
    ):
        run_job(spec, "cpu")


def _hashwh_spec(data, b, tmp_path):
    return {
        "method": "hashwh",
        "grid": [{"b": b, "lam": 0.1}],
        "data": data,
        "training": {"seeds": [0], "epochs": 1, "batch_size": 32, "width": 2},
        "labels": {"experiment": "proteingym", "dataset": "mine"},
        "outputs": {"records": str(tmp_path / "runs")},
    }


def test_a_wide_table_binarizes_without_warnings(tmp_path):
    # 150 mutated sites: a genotype column per site, more than pandas' fragmentation threshold
    path = tmp_path / "wide.csv"
    path.write_text(
        "mutant,DMS_score\n" + "".join(f"A{p}G,{p * 0.1}\nA{p}C,{p * 0.2}\n" for p in range(1, 151))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parsed = own_data.parse(path, {"format": "proteingym", "binarization": "mutated"})
    assert parsed.frame.shape == (150, 151) and parsed.merged == 150  # G and C: one genotype


def test_the_log_counts_genotypes_variants_and_merges_per_fold(tmp_path):
    path = tmp_path / "merging.csv"
    # 'mutated' binarization: A1G, A1C and A1D are one genotype, of fold 0 (its first row's)
    rows = ["A1G,1,0", "A1C,2,0", "A1D,3,1", "C2D,4,1", "D3E,5,2", "E4F,6,3", "F5G,7,4"]
    path.write_text("mutant,DMS_score,fold_random_5\n" + "\n".join(rows) + "\n")
    parsed = own_data.parse(
        path, {"format": "proteingym", "binarization": "mutated", "folds": ["fold_random_5"]}
    )
    assert parsed.fold_variants["fold_random_5"] == [2, 2, 1, 1, 1]
    assert "fold sizes [1, 1, 1, 1, 1] genotypes from [2, 2, 1, 1, 1] variants" in (
        parsed.summary()
    )
    assert parsed.merged == 2 and parsed.fold_conflicts["fold_random_5"] == 1


def test_the_protocol_alone_plans_no_curve_and_its_report_reads_only_the_protocol(tmp_path):
    contract = protocol_contract(", folds: [fold_random_5]", curve="")
    assert "train_sizes" not in contract.config["real"]["datasets"]["mine"]
    assert not contract.outputs("train", experiment="real")
    assert not contract.outputs("baselines", experiment="real")
    assert len(contract.outputs("train", experiment="proteingym", dataset="mine")) > 0
    assert not [
        j
        for j in contract.jobs.values()
        if j.kind in ("epistasis", "aggregate") and "real" in str(j.spec.to_dict())
    ]
    (claims,) = [j for j in contract.jobs.values() if j.kind == "claims"]
    assert list(claims.inputs) == [contract.layout.table_path("proteingym_mine")]
    assert "proteingym_spearman" in contract.figures() and "fig5a_real_r2" not in contract.figures()


def test_a_report_of_the_protocol_alone_is_its_section(tmp_path):
    from test_proteingym import fold_frame

    from whcore.pipeline.analyses.own_data import NO_CURVE, write_report
    from whcore.pipeline.analyses.proteingym import summarize_folds

    frame = fold_frame({"hashwh": [0.8, 0.7, 0.9, 0.6, 0.8], "lasso": [0.5, 0.6, 0.4, 0.5, 0.7]})
    table = frame.merge(summarize_folds(frame), on=["dataset", "scheme", "method"])
    summary, _ = write_report({"proteingym_mine": table}, tmp_path / "c.md", tmp_path / "c.json")
    report = (tmp_path / "c.md").read_text()
    assert NO_CURVE in report and "## Whole-table protocol on ProteinGym's folds" in report
    assert "leaderboard" not in report.split("## ")[-1]
    assert "train size" not in report.split(NO_CURVE)[1] and summary.empty


@pytest.mark.workflow
@pytest.mark.parametrize("protocol", ["proteingym", "leaderboard"])
def test_a_snakemake_dry_run_plans_the_protocol_alone(tmp_path, protocol):
    import subprocess

    import yaml
    from conftest import snakemake_cmd, snakemake_env

    fold_table(tmp_path / "a.csv")
    config = protocol_contract(", folds: [fold_random_5]", curve="", protocol=protocol).config
    (tmp_path / "gym.yaml").write_text(yaml.safe_dump(config))
    command = snakemake_cmd(tmp_path, "-n", "--configfile", str(tmp_path / "gym.yaml"))
    result = subprocess.run(command, env=snakemake_env(), text=True, capture_output=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-2000:]
    table = {"proteingym": "proteingym_mine", "leaderboard": "leaderboard_mine"}[protocol]
    assert "real_selected" not in result.stdout and f"tables/{table}.parquet" in result.stdout


def test_epistasis_of_a_dataset_without_a_curve_is_refused_in_one_line():
    from test_config import validate

    from whcore.pipeline.config import ConfigError

    config = protocol_contract(curve="").config
    config["epistasis"]["datasets"] = ["mine"]
    with pytest.raises(ConfigError, match=r"^config key epistasis.datasets: 'mine' runs Pro"):
        validate(config)


def test_the_leaderboard_mode_plans_one_job_apart_from_the_whole_table_protocol():
    contract = protocol_contract(", folds: [fold_random_5]", curve="", protocol="leaderboard")
    (job,) = contract.jobs_of("leaderboard")
    assert job.spec.schemes == ["fold_random_5"] and job.spec.raw == "a.csv"
    assert job.spec.methods == ["onehot", "ridge", "standard", "hashwh"]
    assert not contract.outputs("train") and not contract.outputs("baselines")
    (claims,) = [j for j in contract.jobs.values() if j.kind == "claims"]
    assert list(claims.inputs) == [contract.layout.table_path("leaderboard_mine")]


def test_the_leaderboard_networks_grids_and_training_are_the_jobs_spec():
    """The dataset's leaderboard key reaches the job's spec over the mode's defaults: a
    changed setting changes the spec (the job reruns), a default written out does not."""
    from whcore.pipeline.analyses.leaderboard import NETWORK_GRIDS, NETWORK_TRAINING

    def spec(own=""):
        folds = ", folds: [fold_random_5]" + (f", leaderboard: {own}" if own else "")
        (job,) = protocol_contract(folds, curve="", protocol="leaderboard").jobs_of("leaderboard")
        return job.spec

    default = spec()
    assert default.grids == {m: NETWORK_GRIDS[m] for m in ("standard", "hashwh")}
    assert default.training["lr"] == NETWORK_TRAINING.lr
    assert default.training["epochs"] == NETWORK_TRAINING.epochs
    written_out = spec(f"{{training: {{lr: {NETWORK_TRAINING.lr}}}}}")
    assert written_out.to_json() == default.to_json()
    changed = spec("{training: {lr: 0.5}, methods: {hashwh: {b: [3], lam: [0.1]}}}")
    assert changed.training["lr"] == 0.5 and changed.grids["hashwh"] == {"b": [3], "lam": [0.1]}
    assert changed.grids["standard"] == NETWORK_GRIDS["standard"]
    assert changed.to_json() != default.to_json()
    assert default.ensemble == 1 and spec("{ensemble: 5}").ensemble == 5


@pytest.mark.parametrize(
    ("own", "key", "words"),
    [
        ("protocol: proteingym, leaderboard: {}", "leaderboard", "add protocol: leaderboard"),
        (
            "protocol: leaderboard, leaderboard: {methods: {fullwh: {lam: [0.1]}}}",
            "leaderboard.methods.fullwh",
            "remove fullwh",
        ),
    ],
)
def test_a_leaderboard_key_the_mode_cannot_use_is_refused(own, key, words):
    from test_config import assert_own_dataset_refused

    entry = f"{{mine: {{file: a.csv, format: proteingym, {own}}}}}"
    assert_own_dataset_refused(entry, f"real.datasets.mine.{key}", words)


def test_a_leaderboard_spec_with_a_network_grid_it_cannot_train_is_refused():
    from whcore.pipeline.jobs.leaderboard import LeaderboardSpec
    from whcore.pipeline.jobs.spec import SpecError

    spec = {
        "dataset": "mine",
        "raw": "a.csv",
        "source": {"format": "proteingym"},
        "schemes": ["fold_random_5"],
        "methods": ["ridge", "hashwh"],
        "outputs": {"table": "t.parquet"},
    }
    for bad, words in (
        ({"grids": {"ens": {}}}, "field grids.ens: not one of the leaderboard's networks"),
        ({"grids": {"hashwh": {"b": [0], "lam": [0.1]}}}, "field grid.0.b"),
        ({"training": {"lr": -1}}, "field training.lr"),
        ({"training": {"epoch": 3}}, "epoch"),
        ({"ensemble": 0}, "field ensemble: 0 is not a count of networks from 1 to 100"),
        ({"ensemble": 101}, "field ensemble: 101"),
        ({"ensemble": "3"}, "field ensemble: '3'"),
        ({"ensemble": True}, "field ensemble: True"),
    ):
        with pytest.raises(SpecError, match=words):
            LeaderboardSpec.from_dict({**spec, **bad}).check("spec.json")


def test_leaderboard_mode_is_for_proteingym_files_only():
    from test_config import assert_own_dataset_refused

    entry = "{mine: {file: a.csv, format: binary, target_column: y, protocol: leaderboard}}"
    assert_own_dataset_refused(entry, "real.datasets.mine.protocol", "use protocol: proteingym")


def test_the_leaderboard_job_scores_a_file_and_the_report_shows_it(tmp_path, monkeypatch):
    from test_leaderboard import published_table

    from whcore.core import training
    from whcore.pipeline.analyses.own_data import write_report
    from whcore.pipeline.cli import main as whcore

    table = published_table(with_folds=True).rename(columns={"DMS_score": "fitness"})
    table.to_csv(tmp_path / "gym.csv", index=False)
    out = tmp_path / "leaderboard_mine.parquet"
    spec = {
        "dataset": "mine",
        "raw": str(tmp_path / "gym.csv"),
        "source": {"format": "proteingym", "target_column": "fitness"},
        "schemes": ["fold_random_5", "fold_modulo_5"],
        "methods": ["ridge", "hashwh"],
        "grids": {"hashwh": {"b": [3], "lam": [0.01]}},
        "training": {"epochs": 3},
        "outputs": {"table": str(out)},
    }
    trained = []
    real_train_grid = training.train_grid
    monkeypatch.setattr(
        training, "train_grid", lambda *a, **k: trained.append(a) or real_train_grid(*a, **k)
    )
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    assert whcore(["leaderboard", "--spec", str(tmp_path / "spec.json")]) in (0, None)
    board = pd.read_parquet(out)
    from whcore.core.io import read_parquet_metadata

    assert read_parquet_metadata(out)["provenance"]["started"]  # the claims job reads it
    assert set(zip(board["scheme"], board["method"])) == {
        (s, m) for s in ("fold_random_5", "fold_modulo_5") for m in ("ridge", "hashwh")
    }
    assert (board["multiples_left_out"] == 6).all() and board["pooled_spearman"].notna().all()
    # the spec's grid and training, not the mode's defaults, selected the network
    assert {config["b"] for call in trained for config in call[2]} == {3}
    assert max(call[4].epochs for call in trained) == 3
    write_report({"leaderboard_mine": board}, tmp_path / "c.md", tmp_path / "c.json")
    report = (tmp_path / "c.md").read_text()
    assert "## Beside ProteinGym's supervised leaderboard" in report
    ridge = board[(board["method"] == "ridge") & (board["scheme"] == "fold_modulo_5")].iloc[0]
    assert f"| mine | modulo | ridge | {ridge['pooled_spearman']:.4f} |" in report


@pytest.mark.workflow
def test_a_third_assay_runs_the_leaderboard_mode_by_configuration(tmp_path):
    """Beside GB1 and avGFP: a generated assay in ProteinGym's format (singles at a dozen
    positions and six double mutants), named in a configuration with ``protocol:
    leaderboard``, runs through Snakemake; its table scores every method on the singles and
    counts the doubles it left out."""
    import subprocess

    import yaml
    from conftest import snakemake_cmd, snakemake_env
    from test_leaderboard import published_table

    table = published_table(with_folds=True)
    table.to_csv(tmp_path / "a.csv", index=False)
    quick = "leaderboard: {training: {epochs: 3}, methods: {hashwh: {b: [3], lam: [0.1]}}}"
    contract = protocol_contract(f", folds: [fold_random_5], {quick}", "", "leaderboard")
    (tmp_path / "gym.yaml").write_text(yaml.safe_dump(contract.config))
    target = contract.layout.table_path("leaderboard_mine")
    command = snakemake_cmd(
        tmp_path, target, "--cores", "2", "--configfile", str(tmp_path / "gym.yaml")
    )
    result = subprocess.run(command, env=snakemake_env(), text=True, capture_output=True)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    scores = pd.read_parquet(tmp_path / target)
    assert set(scores["method"]) == {"onehot", "ridge", "standard", "hashwh"}
    assert (scores["multiples_left_out"] == 6).all()
    assert scores["pooled_spearman"].notna().all()
