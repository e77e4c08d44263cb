"""Paths as patterns: the wildcards that make a pattern a path, as Snakemake finds them."""

from whcore.pipeline.runtime.layout import Layout, matches, wildcards_of


def test_the_wildcards_of_a_path():
    records = Layout("run").records_of("synthetic")
    path = "results/run/runs/synthetic/n50_draw1/hashwh/b7/size250_dseed0"
    assert wildcards_of(records, path) == {
        "dataset": "n50_draw1",
        "method": "hashwh",
        "group": "b7",
        "size": "250",
        "dseed": "0",
    }
    # part of a component, as a cell's rule names its units
    assert wildcards_of(records.replace("{dataset}", "n{n}_draw1"), path)["n"] == "50"
    assert not matches(records.replace("{dataset}", "n{n}_draw2"), path)
    # a wildcard is one component, never two, and a repeated one the same text twice
    assert wildcards_of("a/{x}", "a/b/c") is None
    assert wildcards_of("{x}/{x}", "b/b") == {"x": "b"} and not matches("{x}/{x}", "b/c")


def test_a_run_writes_its_own_patterns_only():
    layout = Layout("run")
    assert layout.writes("results/run/tables/real_summary.parquet")
    assert not layout.writes("results/other/tables/real_summary.parquet")
    assert not layout.writes("results/run/tables/deeper/real_summary.parquet")
