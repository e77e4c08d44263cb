"""The README's code examples run as written."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def python_blocks(section: str, page: Path = README) -> list[str]:
    text = page.read_text()
    start = text.index(section)
    end = text.find("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start : end if end > 0 else None], re.DOTALL)


def test_hashwh_training_loop_example_prints_and_checks_what_it_shows():
    """The library's first example (the same on the README and docs/library.md) runs as
    written, prints its loss and penalty as it trains, and asserts what it prints."""
    import contextlib
    import io

    import torch

    section = "## Use HashWH in your own training loop"
    (code,) = python_blocks(section)
    assert python_blocks(section, REPO / "docs" / "library.md") == [code]
    threads = torch.get_num_threads()  # the example sets its process's threads: not the tests'
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        torch.set_num_threads(threads)
    lines = printed.getvalue().splitlines()
    shown = r"step +\d+: mse \d\.\d+, penalty \d+\.\d+, loss \d\.\d+"
    assert len(lines) >= 2 and all(re.fullmatch(shown, line) for line in lines), lines
    asserted = re.findall(r"^assert (\w+)", code, re.MULTILINE)
    assert asserted == ["loss", "hashwh_penalty"], asserted


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.DOTALL)


def commands(block: str) -> list[str]:
    """The command lines of a bash block, without comments."""
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def command_lines(text: str) -> list[str]:
    """The command lines of every bash block of ``text``."""
    return [line for block in bash_blocks(text) for line in commands(block)]


def snakemake_commands(pages) -> list[str]:
    """Every Snakemake command line of the bash blocks of ``pages``."""
    lines = [line for page in pages for line in command_lines(page.read_text())]
    return [line for line in lines if re.match(r"^(\w+=\S+ )*snakemake ", line)]


DOCS = sorted((REPO / "docs").glob("*.md"))


@pytest.mark.workflow
def test_docs_snakemake_commands_parse_and_plan(tmp_path):
    """Each command dry-runs as written (on the tiny configuration where it names none), so a
    target swallowed by --configfile or a stale option fails here, not for a reader."""
    import shlex

    from conftest import run_snakemake

    commands = snakemake_commands(DOCS)
    assert len(commands) >= 3
    for command in commands:
        words = shlex.split(command)
        env = dict(word.split("=", 1) for word in words[: words.index("snakemake")])
        args = words[words.index("snakemake") + 1 :]
        if "--report" in args:
            continue  # a report needs a finished run; its argument order is checked below
        if "--configfile" not in args:
            args += ["--configfile", str(REPO / ".test/config.yaml")]
        result = run_snakemake("-n", *args, workdir=tmp_path, env=env, check=False, cwd=REPO)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}"


def test_snakemake_commands_put_targets_first():
    """--configfile and --config swallow what follows them: a target after them is lost. (One
    --configfile may name several files, merged in order: `--configfile a.yaml plan.yaml`, and
    one --config several settings: `--config device=cuda stack_units=True`.)"""
    import shlex

    commands = snakemake_commands([README, *DOCS])
    assert len(commands) >= 10
    for command in commands:
        words = shlex.split(command)
        for option in ("--configfile", "--config"):
            if option in words:
                following = words[words.index(option) + 2 :]
                if option == "--configfile":
                    while following and following[0].endswith((".yaml", ".yml", ".json")):
                        following = following[1:]
                else:  # --config takes every key=value that follows
                    while following and "=" in following[0]:
                        following = following[1:]
                assert not following or following[0].startswith("-"), command


def test_readme_is_a_short_guide_with_working_links():
    """The README stays a guide (details live in docs/), and every docs/ page it links exists."""
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert links and all((REPO / link).exists() for link in links), links
    pages = {p.name for p in (REPO / "docs").glob("*.md")}
    linked = {Path(link).name for link in links}
    assert pages - linked <= {"index.md"}, pages - linked  # every page reachable from the README


def test_docs_build_strictly(tmp_path):
    """The documentation site, API reference included, builds with warnings as errors."""
    import shutil
    import subprocess
    import sys

    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).with_name("mkdocs"))
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "hashwh_penalty" in (tmp_path / "site" / "api" / "index.html").read_text()


# --- the README as a newcomer meets it: a clean clone, a fresh shell -----------------------------


def section(title: str) -> str:
    """The README's section under the heading ``title`` (``## ...``)."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The files a clone of this checkout holds once its changes are committed (nothing git
    ignores: no resources/, results/ or .venv), with the environment the tests run in as
    .venv, where `make` puts it."""
    import shutil
    import subprocess
    import sys

    if not (Path(sys.prefix) / "bin" / "activate").is_file():
        pytest.skip("the tests run outside a virtual environment: nothing to activate")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    root = tmp_path_factory.mktemp("clone") / "whcore"
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # a file deleted but not yet committed is no longer there
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    (root / ".venv").symlink_to(sys.prefix)
    return root


def fresh_shell(command: str, cwd: Path) -> None:
    """Run ``command`` in bash as a new shell would: none of the virtual environment's
    commands on PATH until the command activates it; fails with the end of its output."""
    import os
    import subprocess
    import sys

    venv_bin = str(Path(sys.prefix) / "bin")
    path = [p for p in os.environ["PATH"].split(os.pathsep) if p and p != venv_bin]
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(path)
    result = subprocess.run(
        ["bash", "-ec", command],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=600,
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}"


def activation(lines: list[str]) -> str:
    """The line of ``lines`` that activates the environment (said once, after `make`)."""
    found = [line for line in lines if re.match(r"^(source|\.) \S*\.venv/bin/activate$", line)]
    assert found, "the README never says how to reach the commands `make` installed"
    return found[0]


def on_tiny(line: str) -> str:
    """A README command of the quick configuration, on the tiny one."""
    return (
        line.replace("config/quick.yaml", ".test/config.yaml")
        .replace("results/quick", "results/tiny")
        .replace("quick.crate.zip", "tiny.crate.zip")
    )


@pytest.mark.workflow
def test_readme_commands_run_in_a_fresh_shell_from_a_clean_clone(clone, tiny_run):
    """After `make`, each command of "Reproduce the paper", each in a new shell after the
    README's one activation line: the run commands on a finished tiny run (the reports, the
    crate and its rendering for real; what would train, dry), then the job by hand as written.
    """
    import shutil

    shutil.copytree(tiny_run, clone, symlinks=True, dirs_exist_ok=True)  # timestamps kept
    activate = activation(command_lines(section("Install and test")))
    runs, by_hand = bash_blocks(section("Reproduce the paper"))
    runs = [on_tiny(line) for line in commands(runs)]
    # A command a later one extends (render, then render with --tex) runs as the later one.
    runs = [
        line
        for i, line in enumerate(runs)
        if not any(later.startswith(f"{line} ") for later in runs[i + 1 :])
    ]
    assert len(runs) >= 10
    for line in runs:
        if re.match(r"^(\w+=\S+ )*snakemake ", line) and "--report" not in line:
            line += "" if "--configfile" in line else " --configfile .test/config.yaml"
            line += " -n"
        fresh_shell(f"{activate}\n{line}", clone)
    made = ["report.zip", "tiny-rendered/claims.md", "tiny-rendered/claims.tex", "claims.tex"]
    assert all((clone / "results/tiny" / path).is_file() for path in made)
    for line in commands(by_hand):
        fresh_shell(f"{activate}\n{line}", clone)
    assert (clone / "results/quick/runs/real/entacmaea/hashwh/b7/size50_dseed0").is_dir()


def multi_mutant_table(path: Path, rows: int = 700) -> None:
    """A ProteinGym-format table of single, double and triple mutants of a 10-residue protein."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    wild = "MKTAYIAKQR"
    mutants: set[str] = set()
    while len(mutants) < rows:
        sites = sorted(rng.choice(len(wild), rng.integers(1, 4), replace=False))
        to = [rng.choice([a for a in "AGLV" if a != wild[s]]) for s in sites]
        mutants.add(":".join(f"{wild[s]}{s + 1}{a}" for s, a in zip(sites, to)))
    scores = rng.normal(size=rows)
    pd.DataFrame({"mutant": sorted(mutants), "DMS_score": scores}).to_csv(path, index=False)


@pytest.mark.workflow
def test_own_data_example_runs_as_written_on_a_multi_mutant_table(clone, tmp_path):
    """The README's configuration and command, in a new shell, on a table of multiple
    mutants: the binarization with its folds for real, the rest of the run dry."""
    text = section("Your own data")
    (config,) = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    (tmp_path / "my_dms.yaml").write_text(config)
    multi_mutant_table(tmp_path / "my_dms.csv")
    lines = [line.replace("/path/to/whcore", str(clone)) for line in command_lines(text)]
    *activate, run = lines
    assert activate == [f"source {clone}/.venv/bin/activate"]
    fresh_shell(f"{activate[0]}\n{run} --until binarize_own", tmp_path)
    assert (tmp_path / "resources/data/my_dms.parquet").is_file()
    fresh_shell(f"{activate[0]}\n{run} -n", tmp_path)


@pytest.mark.workflow
def test_the_workflow_runs_as_a_module_under_the_catalogs_prefix(clone, tmp_path):
    """docs/workflow.md's module snippet (`use rule * from whcore as whcore_*`, the workflow
    catalog's usage) plans the tiny configuration."""
    from conftest import run_snakemake

    page = (REPO / "docs/workflow.md").read_text()
    (snippet,) = re.findall(r"```snakemake\n(.*?)```", page, re.DOTALL)
    assert "use rule * from whcore as whcore_*" in snippet
    snippet = snippet.replace("/path/to/whcore", str(clone))
    snippet = snippet.replace('"config/quick.yaml"', f'"{clone}/.test/config.yaml"')
    (tmp_path / "Snakefile").write_text(snippet)
    catalog = (REPO / ".snakemake-workflow-catalog.yml").read_text()
    assert "use rule * from whcore as whcore_*" in catalog
    result = run_snakemake("-n", "--cores", "1", workdir=tmp_path, checkout=tmp_path)
    assert re.search(r"^whcore_aggregate_real\s+1$", result.stdout, re.MULTILINE), result.stdout
