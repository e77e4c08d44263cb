"""The report of a run whose datasets are all the user's own: which method predicts each
landscape best, by how much and how sure, per train size (and split scheme where the run has
several), in place of the paper's claims, which do not apply to a table the paper never saw.

Units are the subsamples of a cell (a dataset, a train size and a data seed; under ProteinGym's
protocol a held-out fold of a split scheme): a network's value in a unit is the mean over its
training seeds of the configuration validation selected (for HashWH over every hash size too),
a baseline's is its one fit. Methods are compared to the best one of the cell (highest mean
test R^2) by paired differences over the units both finished, with a two-sided 95% Student t
confidence interval; a unit where a method diverged counts against nothing and is counted.

Where datasets run the whole-table protocol on ProteinGym's folds (``proteingym_<dataset>``
tables), the report adds it: per dataset and split scheme every method's mean Spearman (with its
standard error), MSE and R^2 over the held-out folds, the folds behind them, and the top
method's paired difference of Spearman to each other one over the folds both finished.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ...core.io import atomic_path
from ..runtime.marks import OWN_DATA_TITLE
from .families import METHOD_LABELS
from .proteingym import SCHEME_LABELS, protocol_folds, protocol_summary

__all__ = [
    "CELL",
    "LEVEL",
    "best_per_cell",
    "curve_lines",
    "leaderboard_lines",
    "paired_difference",
    "paired_differences",
    "proteingym_lines",
    "unit_values",
    "write_report",
]

LEVEL = 0.95
CELL = ["dataset", "split", "train_size"]
UNIT_OF = {"data_seed": "data seed", "fold": "held-out fold"}


def _unit_key(selected: pd.DataFrame) -> str:
    return "fold" if "fold" in selected.columns else "data_seed"


def unit_values(selected: pd.DataFrame, value: str = "test_r2") -> pd.DataFrame:
    """One row per (cell, unit, method): ``value`` of the configuration with the best validation
    R^2 among the method's rows of each run, averaged over training seeds; ``diverged`` where
    every configuration of a run diverged (such runs are left out of the mean)."""
    frame = selected.copy()
    if "split" not in frame:
        frame["split"] = "random subsample"
    unit = _unit_key(frame)
    run = [*CELL, unit, "method", "seed"]
    score = frame["val_r2"].where(~frame["diverged"].astype(bool), -np.inf).fillna(-np.inf)
    best = frame.loc[score.groupby([frame[k] for k in run], sort=False).idxmax()]
    best = best.assign(value=best[value].where(~best["diverged"].astype(bool)))
    grouped = best.groupby([*CELL, unit, "method"], sort=True)
    out = grouped.agg(value=("value", "mean"), diverged=("diverged", "all")).reset_index()
    return out.rename(columns={unit: "unit"})


def best_per_cell(units: pd.DataFrame) -> pd.DataFrame:
    """Per cell and method: units finished, mean, standard deviation and standard error of the
    value; ``best`` marks the highest mean of each cell."""
    rows = units.dropna(subset=["value"]).groupby([*CELL, "method"], sort=True)["value"]
    table = rows.agg(units="count", mean="mean", sd="std").reset_index()
    table["se"] = table["sd"] / np.sqrt(table["units"])
    top = table.groupby(CELL)["mean"].transform("max")
    table["best"] = table["mean"] == top
    return table


def paired_differences(units: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """Per cell, the best method minus each other one over the units both finished: units,
    mean difference, its confidence interval (two-sided Student t at ``level``) and the paired
    t-test's two-sided p-value (NaN with fewer than two units)."""
    summary = best_per_cell(units)
    rows = []
    for cell, methods in summary.groupby(CELL, sort=True):
        best = methods.loc[methods["best"], "method"].iloc[0]
        wide = units[(units[CELL] == pd.Series(cell, index=CELL)).all(axis=1)].pivot(
            index="unit", columns="method", values="value"
        )
        for other in methods["method"]:
            if other == best:
                continue
            pair = wide[[best, other]].dropna()
            paired = paired_difference((pair[best] - pair[other]).to_numpy(), level)
            rows.append(dict(zip(CELL, cell), best=best, other=other, **paired))
    return pd.DataFrame(
        rows, columns=[*CELL, "best", "other", "units", "difference", "low", "high", "p_value"]
    )


def paired_difference(diff: np.ndarray, level: float = LEVEL) -> dict:
    """Units, mean, two-sided Student t interval at ``level`` and the paired t-test's p-value
    of paired differences (interval and p NaN with fewer than two)."""
    n = len(diff)
    mean = float(diff.mean()) if n else np.nan
    if n >= 2 and diff.std(ddof=1) > 0:
        half = stats.t.ppf(0.5 + level / 2, n - 1) * diff.std(ddof=1) / np.sqrt(n)
        p = float(stats.ttest_1samp(diff, 0.0).pvalue)
    elif n >= 2:  # identical differences: no spread
        half, p = 0.0, (0.0 if mean != 0 else 1.0)
    else:
        half, p = np.nan, np.nan
    return {"units": n, "difference": mean, "low": mean - half, "high": mean + half, "p_value": p}


def _label(method: str) -> str:
    return METHOD_LABELS.get(method, method)


def _cell_title(cell: tuple) -> str:
    dataset, split, size = cell
    return f"{dataset}, {split}, train size {size}" if split else f"{dataset}, train size {size}"


def _spearman_cell(row) -> str:
    se = "(one fold: no s.e.)" if np.isnan(row["spearman_se"]) else f"+- {row['spearman_se']:.4f}"
    failed = int(row.get("failed_folds", 0))
    total = int(row["folds"]) + failed
    on = f" ({int(row['folds'])} of {total} folds finished)" if failed else ""
    return f"{row['spearman_mean']:.4f} {se}{on}"


def _best_on_most_folds(rows: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    """The best method by mean Spearman among those of a scheme with the most finished folds,
    and the others: a mean over fewer folds is not compared with one over all of them."""
    most = rows["folds"] == rows["folds"].max()
    return rows[most].sort_values("spearman_mean", ascending=False).iloc[0], rows[~most]


def _gap(top: str, method: str, folds: pd.DataFrame | None, level: float) -> str:
    """The top method's Spearman minus ``method``'s over the folds both finished, with its
    interval and p-value (empty without the folds)."""
    if folds is None or method == top:
        return "(top) |" if method == top else " |"
    wide = folds.pivot(index="fold", columns="method", values="spearman")
    d = paired_difference((wide[top] - wide[method]).dropna().to_numpy(), level)
    if d["units"] < 2:
        return f"{d['difference']:+.4f} (fewer than 2 paired folds: no interval) |"
    interval = f"{d['difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"
    return f"{interval}, {d['units']} paired | {d['p_value']:.3g}"


def proteingym_lines(
    summary: pd.DataFrame, folds: pd.DataFrame | None = None, level: float = LEVEL
) -> list[str]:
    """The report's section on the whole-table protocol on ProteinGym's folds (``summary``: one
    row per dataset, scheme and method, as ``whcore.pipeline.analyses.proteingym.protocol_summary`` gives;
    ``folds``: the per-fold rows of the protocol tables, for the paired differences)."""
    lines = [
        "",
        "## Whole-table protocol on ProteinGym's folds",
        "",
        "Each method trained with its grid on four folds of a split scheme (validation carved "
        "from them, model selection on it) and scored on every row of the held-out fold, every "
        "fold held out once; each score is the mean over the folds, Spearman +- its standard "
        "error. These compare the methods on this table; they are not ProteinGym's leaderboard "
        "numbers (single mutants, refit on all four folds, one Spearman over the pooled folds: "
        "docs/leaderboard.md). A fold with no finite Spearman (no fit finished, or a constant "
        "prediction) failed: it is counted, never averaged, and only the methods with the most "
        "finished folds of a scheme are ranked (the others are listed below the table). The top "
        "method is compared with each other one by the paired difference of Spearman over the "
        f"folds both finished, with its two-sided {level:.0%} Student t interval and p-value "
        "(five folds: wide intervals; not corrected for the number of comparisons).",
        "",
        "| dataset | split scheme | method | Spearman (mean +- s.e.) | MSE (mean) | R^2 (mean) "
        f"| folds | top minus it [{level:.0%} CI] | p |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    unranked = []
    for (dataset, scheme), rows in summary.groupby(["dataset", "scheme"], sort=True):
        top, fewer = _best_on_most_folds(rows)
        mine = None
        if folds is not None:
            mine = folds[(folds["dataset"] == dataset) & (folds["scheme"] == scheme)]
        for _, row in rows.sort_values("spearman_mean", ascending=False).iterrows():
            lines.append(
                f"| {dataset} | {SCHEME_LABELS.get(scheme, scheme)} | {_label(row['method'])} | "
                f"{_spearman_cell(row)} | {row['mse_mean']:.4g} | {row['r2_mean']:.4f} | "
                f"{int(row['folds'])} | {_gap(top['method'], row['method'], mine, level)} |"
            )
        unranked += [
            f"- {dataset}, {SCHEME_LABELS.get(scheme, scheme)}: {_label(row['method'])} is not "
            f"ranked: its mean is over {int(row['folds'])} finished folds "
            f"({int(row.get('failed_folds', 0))} failed), fewer than the {int(top['folds'])} "
            "of the top method."
            for _, row in fewer.iterrows()
        ]
    if unranked:
        lines += ["", *unranked]
    for dataset, rows in summary.groupby("dataset", sort=True):
        schemes = [s for s in SCHEME_LABELS if s in set(rows["scheme"])]
        lines += ["", f"### {dataset}: Spearman by method and split scheme", ""]
        lines += ["| method | " + " | ".join(SCHEME_LABELS[s] for s in schemes) + " |"]
        lines += ["|---|" + "---|" * len(schemes)]
        wide = rows.set_index(["method", "scheme"])
        order = rows.groupby("method")["spearman_mean"].mean().sort_values(ascending=False)
        for method in order.index:
            cells = [
                _spearman_cell(wide.loc[(method, s)]) if (method, s) in wide.index else ""
                for s in schemes
            ]
            lines.append(f"| {_label(method)} | " + " | ".join(cells) + " |")
    return lines


def write_report(tables: dict[str, pd.DataFrame], md_path, json_path, level: float = LEVEL):
    """``claims.md`` and ``claims.json`` of a run of the user's own data: per cell the methods
    ranked by mean test R^2, the best one, and the paired differences to it; then the
    protocol's section. A run whose datasets all run the protocol alone has no train-size
    curve (no ``real_selected`` table): its report is the protocol's section."""
    record: dict = {"report": "own data", "level": level}
    if "real_selected" in tables:
        lines, summary, diffs, unit = curve_lines(tables["real_selected"], level)
        record.update(
            unit=unit,
            cells=json.loads(summary.to_json(orient="records")),
            differences=json.loads(diffs.to_json(orient="records")),
        )
    else:
        lines = [OWN_DATA_TITLE, "", NO_CURVE]
        summary, diffs = pd.DataFrame({"best": pd.Series(dtype=bool)}), pd.DataFrame()
    protocol = None
    if any(name.startswith("proteingym_") for name in tables):
        protocol = protocol_summary(tables)
        lines += proteingym_lines(protocol, protocol_folds(tables), level)
    boards = [t for name, t in sorted(tables.items()) if name.startswith("leaderboard_")]
    if boards:
        board = pd.concat(boards, ignore_index=True)
        lines += leaderboard_lines(board)
        record["leaderboard"] = json.loads(board.to_json(orient="records"))
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text("\n".join(lines) + "\n")
    if protocol is not None:
        record["proteingym"] = json.loads(protocol.to_json(orient="records"))
    with atomic_path(json_path) as tmp:
        Path(tmp).write_text(json.dumps(record, indent=1))
    return summary, diffs


LEADERBOARD_LABELS = {"onehot": "One-Hot", "ridge": "ridge"}


def leaderboard_lines(board: pd.DataFrame) -> list[str]:
    """The report's section on the leaderboard mode (``board``: the ``leaderboard_<dataset>``
    tables): per dataset, split scheme and method the pooled Spearman, the per-fold mean and
    the pooled MSE, as ProteinGym's supervised leaderboard computes them."""
    lines = [
        "",
        "## Beside ProteinGym's supervised leaderboard",
        "",
        "The single mutants scored as the leaderboard scores an assay (docs/leaderboard.md): "
        "each method refit on all four training folds (the networks' settings and epoch count "
        "chosen first on a fifth of them), one Spearman over the pooled out-of-fold "
        "predictions, beside the mean of the folds' Spearman; MSE on the targets standardized "
        "with the training folds. These numbers stand beside the leaderboard's; a published "
        "random draw of folds cannot be re-drawn, so fold_random_5 numbers differ by the draw.",
        "",
        "| dataset | split scheme | method | pooled Spearman | per-fold mean | pooled MSE | "
        "failed folds | singles |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in board.itertuples():
        label = LEADERBOARD_LABELS.get(row.method) or _label(row.method)
        scheme = SCHEME_LABELS.get(row.scheme, row.scheme)
        lines.append(
            f"| {row.dataset} | {scheme} | {label} | {row.pooled_spearman:.4f} | "
            f"{row.spearman_mean:.4f} | {row.pooled_mse:.4f} | {int(row.failed_folds)} | "
            f"{int(row.rows)} |"
        )
    return lines


NO_CURVE = (
    "No dataset of this run has train_sizes (each runs a protocol of ProteinGym's alone), so "
    "no train-size curve ran: the methods are compared in the sections below."
)


def curve_lines(selected: pd.DataFrame, level: float = LEVEL):
    """The report's part on the train-size curve (``selected``: the ``real_selected`` table):
    (lines, the best method per cell, the paired differences, the unit's name)."""
    unit = UNIT_OF[_unit_key(selected)]
    units = unit_values(selected)
    summary = best_per_cell(units)
    diffs = paired_differences(units, level)
    diverged = units[units["diverged"]].groupby([*CELL, "method"]).size()
    lines = [
        OWN_DATA_TITLE,
        "",
        "Every dataset of this run is your own, so the paper's claims are not checked here "
        "(they concern the paper's datasets). For each cell (dataset, split scheme, train "
        f"size) the methods are ranked by their mean test R^2 over the units, a unit being one "
        f"{unit}; a network's value in a unit is the mean over its training seeds of the "
        "configuration validation selected (HashWH: over every hash size too), a baseline's is "
        "its one fit. The best method is compared with each other one by the paired "
        f"difference of test R^2 over the units both finished, with its two-sided {level:.0%} "
        "Student t confidence interval and the paired t-test's p-value (not corrected for the "
        "number of comparisons). Runs that diverged are left out and counted.",
        "",
        "## Best method per cell",
        "",
        "| dataset | split | train size | best | test R^2 (mean +- s.e.) | units |",
        "|---|---|---|---|---|---|",
    ]
    for cell, rows in summary.groupby(CELL, sort=True):
        top = rows[rows["best"]].iloc[0]
        se = "(one unit: no s.e.)" if np.isnan(top["se"]) else f"+- {top['se']:.4f}"
        lines.append(
            f"| {cell[0]} | {cell[1]} | {cell[2]} | {_label(top['method'])} | "
            f"{top['mean']:.4f} {se} | {int(top['units'])} |"
        )
    for cell, rows in summary.groupby(CELL, sort=True):
        lines += ["", f"## {_cell_title(cell)}", ""]
        lines += [
            "| method | test R^2 mean | s.d. | units | diverged | best minus it "
            f"[{level:.0%} CI] | p |",
            "|---|---|---|---|---|---|---|",
        ]
        mine = diffs[(diffs[CELL] == pd.Series(cell, index=CELL)).all(axis=1)].set_index("other")
        for row in rows.sort_values("mean", ascending=False).itertuples():
            failed = int(diverged.get((*cell, row.method), 0))
            if row.method in mine.index:
                d = mine.loc[row.method]
                if d["units"] >= 2:
                    gap = f"{d['difference']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}]"
                    p = f"{d['p_value']:.3g}"
                else:
                    gap, p = f"{d['difference']:+.4f} (fewer than 2 paired units: no interval)", ""
                gap += f", {int(d['units'])} paired"
            else:
                gap, p = "(best)", ""
            sd = "" if np.isnan(row.sd) else f"{row.sd:.4f}"
            lines.append(
                f"| {_label(row.method)} | {row.mean:.4f} | {sd} | {row.units} | {failed} | "
                f"{gap} | {p} |"
            )
    return lines, summary, diffs, unit
