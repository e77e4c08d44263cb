"""What of the paper's grid a claim covers: each verdict line carries it, so that a claim
decided on Entacmaea alone, or at n = 25 only, does not read as the paper's whole sentence.

The paper's grids (../shared/paper/EXPERIMENTS.md): the spectrum experiment at train sizes
100-400 over 5 g* draws; the synthetic one at n in {25, 50, 100} and c = 1..8 (24 (n, c) cells,
3 g* draws each); the real one on 4 datasets at 10 train sizes each (40 cells). Each
experiment's claim group takes its scope function (claim, tables) -> scope from here
(``experiments.EXPERIMENTS``), for the claims that state none of their own."""

from __future__ import annotations

import pandas as pd


def _values(table: pd.DataFrame, column: str) -> str:
    values = sorted(table[column].dropna().unique()) if column in table else []
    return ", ".join(str(v) for v in values)


def spectrum_cells(table: pd.DataFrame) -> str:
    """The cells a spectrum table holds, out of the paper's."""
    draws = table["dataset"].nunique() if "dataset" in table else 0
    return (
        f"train sizes {_values(table, 'train_size')} and {draws} g* draws, "
        "of the paper's train sizes 100-400 and 5 g* draws"
    )


def synthetic_cells(table: pd.DataFrame) -> str:
    """The cells a synthetic table holds, out of the paper's."""
    cells = table[["n", "c"]].drop_duplicates() if {"n", "c"} <= set(table) else []
    draws = table["draw"].nunique() if "draw" in table else 0
    return (
        f"n = {_values(table, 'n')}, c = {_values(table, 'c')}: {len(cells)} (n, c) cells, "
        f"{draws} g* draws, of the paper's 24 (n, c) cells (n = 25, 50, 100; c = 1-8) and 3 g* "
        "draws per n"
    )


def real_cells(table: pd.DataFrame) -> str:
    """The cells a real-data table holds, out of the paper's."""
    cells = table[["dataset", "train_size"]].drop_duplicates()
    return (
        f"{_values(table, 'dataset')} at train sizes {_values(table, 'train_size')}: "
        f"{len(cells)} cells of the paper's 40 (dataset, train size) cells (4 datasets x 10 sizes)"
    )


def members_scope(scope: str, judged: list[str], missing: list[str]) -> str:
    """``scope`` of a claim over a set of methods that lacks members the paper's sentence
    covers (``missing``), with the methods it judged."""
    return (
        f"{scope}; methods judged: {', '.join(judged)} "
        f"({' and '.join(missing)} not trained in this configuration)"
    )


def _table_scope(prefix: str, table: str, cells):
    def scope(claim, tables) -> str:
        return cells(tables[table]) if claim.id.startswith(prefix) and table in tables else ""

    return scope


# The scopes of the claim groups: (claim, tables) -> the scope of a claim stating none.
spectrum_scope = _table_scope("spectrum_", "spectrum_selected", spectrum_cells)
synthetic_scope = _table_scope("synthetic_", "synthetic_selected", synthetic_cells)
real_scope = _table_scope("real_", "real_selected", real_cells)


def ablation_scope(claim, tables) -> str:
    return f"{claim.id.rsplit('_', 1)[-1]}: the forests of this run"


def entacmaea_scope(claim, tables) -> str:
    return "Entacmaea's whole landscape (the paper's Figure 5d)"


def hashing_scope(claim, tables) -> str:
    return "a simulation of the lemma (n = 20, k in {10, 50}, b in {4, 6, 8})"
