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


def snakemake_commands() -> list[str]:
    """Every Snakemake command line of the shell blocks of the README and the docs pages."""
    pages = [README, *sorted((REPO / "docs").glob("*.md"))]
    blocks = [
        b for page in pages for b in re.findall(r"```bash\n(.*?)```", page.read_text(), re.DOTALL)
    ]
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if re.match(r"^(\w+=\S+ )*snakemake ", line)]


@pytest.mark.workflow
def test_readme_snakemake_commands_parse_and_plan(tmp_path):
    """Each command dry-runs as written (on the tiny configuration where it names none), so a
    target swallowed by --configfile or a stale option fails here, not for a reader."""
    import shlex

    from conftest import run_snakemake

    commands = snakemake_commands()
    assert len(commands) >= 7
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
    for command in commands:  # targets first: --configfile and --config swallow what follows
        words = shlex.split(command)
        for option in ("--configfile", "--config"):
            if option in words:
                following = words[words.index(option) + 2 :]
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


def test_readme_whcore_spec_commands_run_as_written():
    """The README's `whcore spec` lines run from a fresh clone (no data, no run needed)."""
    import shlex
    import subprocess
    import sys

    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.DOTALL)
    lines = [
        line.split("  #")[0].split(" | ")[0].strip() for b in blocks for line in b.splitlines()
    ]
    commands = [line for line in lines if line.startswith("whcore spec ")]
    assert len(commands) >= 2
    whcore = str(Path(sys.executable).with_name("whcore"))
    for command in commands:
        words = shlex.split(command)
        result = subprocess.run([whcore, *words[1:]], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0 and result.stdout.strip(), f"{command}\n{result.stderr}"
