"""What of the paper's grid a claim covers: each verdict line carries it, so that a claim
decided on Entacmaea alone, or at n = 25 only, does not read as the paper's whole sentence.

The paper's grids (../shared/paper/EXPERIMENTS.md): the spectrum experiment at train sizes
100-400 over 5 g* draws; the synthetic one at n in {25, 50, 100} and c = 1..8 (24 (n, c) cells,
3 g* draws each); the real one on 4 datasets at 10 train sizes each (40 cells)."""

from __future__ import annotations

import pandas as pd

PAPER = {
    "spectrum": "of the paper's train sizes 100-400 and 5 g* draws",
    "synthetic": "of the paper's 24 (n, c) cells (n = 25, 50, 100; c = 1-8) and 3 g* draws per n",
    "real": "of the paper's 40 (dataset, train size) cells (4 datasets x 10 sizes)",
}
# A claim id's prefix -> the table its experiment's scope is read from.
TABLES = {
    "spectrum_": "spectrum_selected",
    "synthetic_": "synthetic_selected",
    "real_": "real_selected",
}


def _values(table: pd.DataFrame, column: str) -> str:
    values = sorted(table[column].dropna().unique()) if column in table else []
    return ", ".join(str(v) for v in values)


def experiment_scope(experiment: str, table: pd.DataFrame) -> str:
    """The cells an experiment's table holds, out of the paper's."""
    if experiment == "spectrum":
        draws = table["dataset"].nunique() if "dataset" in table else 0
        return (
            f"train sizes {_values(table, 'train_size')} and {draws} g* draws, {PAPER[experiment]}"
        )
    if experiment == "synthetic":
        cells = table[["n", "c"]].drop_duplicates() if {"n", "c"} <= set(table) else []
        draws = table["draw"].nunique() if "draw" in table else 0
        return (
            f"n = {_values(table, 'n')}, c = {_values(table, 'c')}: {len(cells)} (n, c) cells, "
            f"{draws} g* draws, {PAPER[experiment]}"
        )
    cells = table[["dataset", "train_size"]].drop_duplicates()
    return (
        f"{_values(table, 'dataset')} at train sizes {_values(table, 'train_size')}: "
        f"{len(cells)} cells {PAPER[experiment]}"
    )


def members_scope(scope: str, judged: list[str], missing: list[str]) -> str:
    """``scope`` of a claim over a set of methods that lacks members the paper's sentence
    covers (``missing``), with the methods it judged."""
    return (
        f"{scope}; methods judged: {', '.join(judged)} "
        f"({' and '.join(missing)} not trained in this configuration)"
    )


def fill_scope(claims, tables: dict[str, pd.DataFrame]) -> None:
    """Give every claim without a scope of its own its experiment's."""
    for claim in claims:
        if claim.scope:
            continue
        for prefix, name in TABLES.items():
            if claim.id.startswith(prefix) and name in tables:
                claim.scope = experiment_scope(prefix.rstrip("_"), tables[name])
        if claim.id.startswith("ablation_"):
            claim.scope = f"{claim.id.rsplit('_', 1)[-1]}: the forests of this run"
        elif claim.id.startswith("entacmaea_"):
            claim.scope = "Entacmaea's whole landscape (the paper's Figure 5d)"
        elif claim.id.startswith("hashing_"):
            claim.scope = "a simulation of the lemma (n = 20, k in {10, 50}, b in {4, 6, 8})"
