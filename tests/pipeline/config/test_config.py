"""Bad configuration values are refused at start, in one line naming the key (no Snakemake run)."""

from pathlib import Path

import pytest
import yaml

import whcore.pipeline.config as config_package
from whcore.core.methods import METHOD_INFO
from whcore.data.datasets import REGISTRY
from whcore.pipeline.analyses.families import BASELINES
from whcore.pipeline.config import ConfigError
from whcore.pipeline.config.schema import SCHEMA_PATH, render
from whcore.pipeline.config.validation import validate_config

ROOT = Path(__file__).parents[3]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
TINY = ROOT / ".test/config.yaml"


def load(path: Path = TINY) -> dict:
    return yaml.safe_load(path.read_text())


def changed(key: str, value: str) -> dict:
    """The tiny configuration with the dotted ``key`` set to ``value``, written as YAML (.nan, .inf)."""
    config = load()
    *parents, last = key.split(".")
    section = config
    for part in parents:
        section = section[part]
    section[last] = yaml.safe_load(value)
    return config


def validate(config: dict) -> None:
    validate_config(config, str(SCHEMA))


def assert_own_dataset_refused(entry: str, key: str, words: str) -> None:
    """The tiny configuration with ``real.datasets`` set to ``entry`` is refused in one line that starts
    with the config ``key`` and says ``words``."""
    from whcore.pipeline.config import ConfigError

    config = changed("real.datasets", entry)
    config["real"]["runtime_dataset"] = next(iter(config["real"]["datasets"]))
    with pytest.raises(ConfigError) as err:
        validate(config)
    message = str(err.value)
    assert message.startswith(f"config key {key}") and words in message, message
    assert "\n" not in message


@pytest.mark.parametrize(
    "key, value",
    [
        # negative, NaN or infinite regularization strengths
        ("spectrum.methods.fullwh.lam", "[-0.1]"),
        ("real.methods.ens.rho", "[0.1, -1]"),
        ("synthetic.methods.hashwh.lam", "[.nan]"),
        ("spectrum.methods.ens.rho", "[.inf]"),
        ("real.baselines.lasso.alpha", "[0.01, .nan]"),
        # empty synthetic validation or test set for the smallest train size (1 * 5 * 8 = 40)
        ("synthetic.val_factor", "0.02"),
        ("synthetic.test_factor", "0.02"),
        # fewer than 2 of the 2^6 = 64 points left for validation
        ("spectrum.train_sizes", "[30, 63]"),
        # more rows than the dataset has (Entacmaea: 8192)
        ("real.datasets.entacmaea.train_sizes", "[40, 8000]"),
        ("real.datasets.entacmaea", "{train_sizes: [8191], val_size: rest, test_size: rest}"),
        ("ablation.datasets.entacmaea.train_size", "8000"),
        # impossible targets: 8 + 28 + 56 = 92 frequencies of degree 1..3 in 8 variables
        ("synthetic.k", "93"),
        ("synthetic.max_degree", "9"),
        ("spectrum.max_degree", "7"),
        # method grids checked against the method registry's parameters
        ("spectrum.methods.hashwh", "{lam: [0.1]}"),
        ("spectrum.methods.hashwh", "{b: [3], lam: [0.1], bogus: [1]}"),
        ("spectrum.methods.hashwh.b", "[2.5]"),
        ("spectrum.methods.ens.decoder", "[fancy]"),
        # more distinct inputs than 2^n: c = 9 at n = 8 needs 3 x 360 > 256
        ("synthetic.cs", "[1, 9]"),
        # grid values equal as numbers
        ("spectrum.methods.fullwh.lam", "[0.01, 0.010]"),
        ("synthetic.methods.ens.rho", "[0.1, 1.0e-1]"),
        ("real.methods.hashwh.b", "[4, 4.0]"),
        # run names that would write outside results/<run_name>/
        ("run_name", "'..'"),
        ("run_name", "'.'"),
        ("run_name", "a/b"),
        # a name longer than a folder's name may be (255 bytes), with its crate's suffix
        ("run_name", "r" * 256),
        # seeds beyond PyTorch's generator (an overflow deep inside a job before)
        ("spectrum.seeds", "[0, 1000000000000000000000000000000]"),
        ("real.seeds", "[4294967296]"),
        # sizes no machine can hold: a network of width 1e9
        ("spectrum.training.width", "1.0e9"),
        ("synthetic.training.width", "1.0e7"),
    ],
)
def test_bad_value_is_refused_naming_the_key(key, value):
    with pytest.raises(ConfigError) as err:
        validate(changed(key, value))
    message = str(err.value)
    assert message.startswith(f"config key {key}") and "\n" not in message


@pytest.mark.parametrize(
    "key, value",
    [
        ("spectrum.methods.fullwh.lam", "[0]"),
        ("spectrum.train_sizes", "[30, 62]"),
        ("real.datasets.entacmaea", "{train_sizes: [8190], val_size: rest, test_size: rest}"),
        ("real.datasets.entacmaea.train_sizes", "[7192]"),
        ("synthetic.k", "92"),
        ("synthetic.val_factor", "0.025"),
        ("run_name", "tiny.v2"),
        ("run_name", "r" * 100),
        ("real.seeds", "[4294967295]"),
    ],
)
def test_edge_values_are_accepted(key, value):
    validate(changed(key, value))


@pytest.mark.parametrize(
    "path",
    [
        ".test/config.yaml",
        "config/quick.yaml",
        "config/faithful.yaml",
        "config/workstation.yaml",
        "config/config.yaml",
    ],
)
def test_shipped_configs_validate(path):
    validate(load(ROOT / path))


def test_a_penalty_too_large_for_any_machine_is_refused_naming_its_key():
    """avGFP has n = 236 inputs, so b = 40 passes b <= n; its 2^40 points per step do not fit."""
    config = changed(
        "real.datasets", "{avgfp: {train_sizes: [100], val_size: 500, test_size: 500}}"
    )
    config["real"]["runtime_dataset"] = "avgfp"
    config["real"]["methods"]["hashwh"]["b"] = [40]
    with pytest.raises(ConfigError) as err:
        validate(config)
    message = str(err.value)
    assert message.startswith("config key real.datasets.avgfp.methods.hashwh.b: ")
    assert "1,099,511,627,776 penalty points" in message and "\n" not in message
    config["real"]["methods"]["hashwh"]["b"] = [16]  # the paper's largest
    validate(config)


def test_memory_limit_follows_the_estimate():
    """The check compares the footprint estimate with the limit it is given: a limit just
    below a job's estimate refuses it, one at the estimate accepts it."""
    from whcore.core.footprint import penalty_points, training_bytes
    from whcore.pipeline.config.validation import _check_memory

    exp = {
        "seeds": [0, 1],
        "methods": {"hashwh": {"b": [8], "lam": [0.1, 1.0]}},
        "training": {"width": 2, "batch_size": 16},
    }
    need = training_bytes(10, 2, 4, 16 + penalty_points("hashwh", {"b": 8}, 10))
    _check_memory(exp, 10, "synthetic", limit=need)
    with pytest.raises(ConfigError, match="config key synthetic.methods.hashwh.b: "):
        _check_memory(exp, 10, "synthetic", limit=need - 1)
    exp["methods"] = {"standard": {}}
    with pytest.raises(ConfigError, match="config key synthetic.training.width: "):
        _check_memory(exp, 10, "synthetic", limit=1000)


def test_a_yaml_syntax_error_in_a_config_file_names_the_file_and_the_line(tmp_path):
    from whcore.pipeline.contract import load_contract

    path = tmp_path / "bad.yaml"
    path.write_text(TINY.read_text().replace("  n: 6\n", "  n: [6\n", 1))
    with pytest.raises(ConfigError) as err:
        load_contract(str(path), str(SCHEMA))
    line = TINY.read_text().splitlines().index("  max_degree: 3") + 1  # where YAML notices
    assert str(err.value).startswith(f"{path}, line {line}, column ")
    assert "not valid YAML" in str(err.value) and "\n" not in str(err.value)


def own_dataset(name: str = "mine", **keys) -> dict:
    """The tiny configuration with one own dataset ``name`` of ``keys`` (beside a valid entry)."""
    config = load()
    entry = {
        "file": "d.csv",
        "format": "sequences",
        "target_column": "y",
        "train_sizes": [10],
        "val_size": "rest",
        "test_size": "rest",
        **keys,
    }
    config["real"]["datasets"] = {name: entry}
    config["real"]["runtime_dataset"] = name
    return config


@pytest.mark.parametrize(
    ("config", "key"),
    [
        (changed("run_name", '"quick\\n"'), "run_name"),
        (own_dataset("mine\n"), "real.datasets"),
        (own_dataset(wild_type="ACD\n"), "real.datasets.mine.wild_type"),
    ],
)
def test_a_name_with_a_final_newline_is_refused(config, key):
    """Python's $ matches before a final newline, JSON Schema's only at the end."""
    with pytest.raises(ConfigError) as err:
        validate(config)
    assert str(err.value).startswith(f"config key {key}: ")
    assert str(err.value).endswith("\\n' ends with a newline; remove it")


def alias_bomb(key: str, levels: int = 9) -> str:
    """The tiny configuration with a billion-laughs value under the dotted ``key``: 9 aliases
    of the level below on each of ``levels`` levels (9^9 strings from 600 bytes)."""
    *parents, last = key.split(".")
    lines = ["lol0: &l0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"lol{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    bomb = yaml.safe_load("\n".join(lines))[f"lol{levels - 1}"]  # shared lists, unexpanded
    config = load()
    section = config
    for part in parents:
        section = section.setdefault(part, {})
    section[last] = bomb
    return yaml.safe_dump(config)  # writes the shared lists as &anchors and *aliases


@pytest.mark.parametrize(
    ("key", "refused"),
    [
        ("epistasis.datasets", "epistasis.datasets[0][0][0]"),
        ("real.datasets.mine.feature_columns", "real.datasets.mine.feature_columns[0][0][0]"),
    ],
)
def test_aliases_expanding_a_config_past_the_bound_are_refused_in_one_line(tmp_path, key, refused):
    from whcore.pipeline.config.validation import load_config
    from whcore.pipeline.runtime.yaml_files import read_yaml

    path = tmp_path / "shared.yaml"  # aliases within the bound are ordinary YAML
    path.write_text(alias_bomb(key, levels=4))
    read_yaml(path, "config file", ConfigError)
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(key))
    assert path.stat().st_size < 5000 and "*id" in path.read_text()
    with pytest.raises(ConfigError) as err:
        load_config(str(path), str(SCHEMA))
    message = str(err.value)
    assert message.startswith(f"{path}, line ") and "\n" not in message
    assert f"key {refused} expands to more than " in message
    assert "without &anchors and *aliases" in message


def test_a_config_value_containing_itself_through_an_alias_is_refused(tmp_path):
    from whcore.pipeline.config.validation import load_config

    path = tmp_path / "loop.yaml"
    path.write_text(TINY.read_text() + "epistasis:\n  datasets: &x [*x]\n")
    with pytest.raises(ConfigError, match=r"key epistasis.datasets\[0\] contains itself"):
        load_config(str(path), str(SCHEMA))


def test_a_config_nested_too_deeply_is_refused_in_one_line(tmp_path):
    from whcore.pipeline.runtime.yaml_files import read_yaml

    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(ConfigError, match=f"^{path}: the config file nests its values too deeply"):
        read_yaml(path, "config file", ConfigError)


def test_the_schema_on_disk_is_generated_from_the_registries():
    """The file a reader sees is the schema in force: its registry part is current."""
    text = SCHEMA_PATH.read_text()
    assert render(text) == text, "run python -m whcore.pipeline.config.schema"
    defs = yaml.safe_load(text)["$defs"]
    assert defs["methods"]["propertyNames"]["enum"] == list(METHOD_INFO)
    assert defs["baselines"]["propertyNames"]["enum"] == list(BASELINES)
    assert defs["paper_dataset"]["enum"] == list(REGISTRY)


def test_the_package_ships_the_workflows_schema():
    """The schema the commands read is the package's (package data, so an installed whcore has
    it), and in a checkout it is the workflow's own file, which Snakemake validates against
    (a link: one file, two places; a wheel holds its copy: envs/check_core.py)."""
    workflow = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
    assert SCHEMA_PATH.parent == Path(config_package.__file__).parent
    assert SCHEMA_PATH.is_symlink() and SCHEMA_PATH.resolve() == workflow


def test_a_config_that_is_a_yte_template_is_refused_in_one_line(tmp_path):
    """Snakemake runs a config file carrying __use_yte__ as a template (Python); the project's
    own reader refuses it, so that no command of ours takes one."""
    from whcore.pipeline.runtime.yaml_files import read_yaml

    config = tmp_path / "shared.yaml"
    config.write_text("__use_yte__: true\n" + TINY.read_text())
    with pytest.raises(ConfigError, match="shared.yaml: carries __use_yte__, which makes") as err:
        read_yaml(config, "config file", ConfigError)
    assert "\n" not in str(err.value) and "Fix: write the values out" in str(err.value)


def test_a_key_written_twice_is_refused_naming_both_lines(tmp_path):
    """PyYAML keeps the second `epochs` silently; a config's value must never be dropped."""
    from whcore.pipeline.runtime.yaml_files import read_yaml

    config = tmp_path / "twice.yaml"
    config.write_text("run_name: a\nspectrum:\n  draws: 2\n  draws: 3\n")
    with pytest.raises(
        ConfigError, match="twice.yaml, line 4, column 3: not valid YAML: dup"
    ) as err:
        read_yaml(config, "config file", ConfigError)
    assert "duplicate key 'draws' (first at line 3" in str(err.value)
