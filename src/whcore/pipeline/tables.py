"""The tidy tables of each experiment, built from run records (see ``whcore.aggregate``).

Each function returns {table name: DataFrame}; the CLI writes them to results/tables/.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..core.io import read_parquet_metadata
from ..core.spectrum import dense_target_spectrum
from ..core.wht import degree
from ..data.synthetic import SparseTarget
from .aggregate import (
    HYPERPARAMETERS,
    forward_fill_epochs,
    parquet_files,
    read_runs,
    run_summaries,
    select_models,
    summarize,
    variant_names,
)

if TYPE_CHECKING:
    from .spec import AggregateSpec

__all__ = ["real_tables", "spectrum_tables", "synthetic_tables"]


def _with_variants(records: pd.DataFrame, split_b: bool) -> pd.DataFrame:
    """Records with their curve id (``variant``); ``method`` and ``b`` stay typed columns and
    are what figures and claims read (``b`` is NaN where a method has none)."""
    records = records.assign(variant=variant_names(records, split_b))
    if "b" not in records:
        records["b"] = np.nan
    for col in ("test_r2", "test_mse"):
        if col not in records:
            records[col] = np.nan
    return records


def _with_typed_curves(table: pd.DataFrame, selected: pd.DataFrame, columns) -> pd.DataFrame:
    """``table`` (one row per curve id and more keys) with each curve's typed ``columns``."""
    typed = selected[["variant", *columns]].drop_duplicates("variant")
    return table.merge(typed, on="variant", how="left")


def _selected_records(records, selected, keys) -> pd.DataFrame:
    """The per-epoch records of the selected models only."""
    config = [c for c in HYPERPARAMETERS if c in records.columns]
    chosen = selected.loc[~selected["diverged"], keys + config + ["seed"]]
    left = records.copy()
    for col in config:
        left[col] = left[col].fillna(-1)
        chosen = chosen.assign(**{col: chosen[col].fillna(-1)})
    return left.merge(chosen, on=keys + config + ["seed"])


def _amplitudes_by_degree(frame: pd.DataFrame) -> pd.DataFrame:
    """coef_<frequency> columns -> amp_deg<d>: the mean learned coefficient of the target
    frequencies of degree d (one per degree for the paper's targets)."""
    coef_cols = [c for c in frame.columns if c.startswith("coef_")]
    by_degree: dict[int, list[str]] = {}
    for col in coef_cols:
        by_degree.setdefault(int(degree(np.int64(col[5:]))), []).append(col)
    amps = {f"amp_deg{d}": frame[cols].mean(axis=1) for d, cols in sorted(by_degree.items())}
    return frame.drop(columns=coef_cols).assign(**amps)


def spectrum_tables(runs, spectra, targets, figure_train_size: int) -> dict:
    """Experiment 1: selected models, their per-epoch spectral metrics, and the spectra of one
    run per (draw, variant) at the figure's train size for the heatmaps."""
    records = _with_variants(read_runs(runs), split_b=True)
    keys = ["dataset", "draw", "variant", "method", "train_size", "data_seed"]
    selected = select_models(run_summaries(records, keys), keys + ["seed"])
    metric_cols = [c for c in records.columns if c.startswith(("sae_", "energy_deg", "coef_"))] + [
        "val_mse",
        "train_mse",
    ]
    columns = keys + ["b", "seed", "epoch"] + metric_cols
    epochs = _selected_records(records, selected, keys)[columns]
    epochs = _amplitudes_by_degree(epochs)
    return {
        "spectrum_selected": selected,
        "spectrum_epochs": epochs,
        "spectrum_heatmap": _heatmap_table(selected, spectra, targets, figure_train_size),
    }


def _params_key(params: dict) -> tuple:
    """Hyperparameters as a hashable key that compares values, not their spelling."""
    return tuple(sorted((str(k), v if isinstance(v, str) else float(v)) for k, v in params.items()))


def _spectra_index(spectra) -> dict:
    """(dataset, method, params, train size, data seed) -> the spectra file of that
    configuration (each file carries the spec of the job that wrote it and its own params)."""
    index = {}
    for path in parquet_files(spectra):
        meta = read_parquet_metadata(path)
        spec, params = meta["spec"], meta["params"]
        labels, data = spec["labels"], spec["data"]
        key = (labels["dataset"], spec["method"], _params_key(params),
               data["train_size"], data["data_seed"])  # fmt: skip
        index[key] = path
    return index


def _run_spectra(run, index: dict, cache: dict, train_size: int) -> pd.DataFrame:
    """|coefficient| per epoch (rows) of one selected run."""
    params = {c: run[c] for c in HYPERPARAMETERS if c in run and pd.notna(run[c])}
    key = (run["dataset"], run["method"], _params_key(params), train_size, int(run["data_seed"]))
    if key not in index:
        raise ValueError(f"no spectra file for {key}; was the job run with spectra?")
    if index[key] not in cache:
        cache[index[key]] = pd.read_parquet(index[key])
    wide = cache[index[key]]
    return wide[wide["seed"] == run["seed"]].drop(columns="seed").set_index("epoch").abs()


def _heatmap_table(selected, spectra, targets, train_size) -> pd.DataFrame:
    """For each draw and curve: the mean |coefficient| per epoch over every selected run (data
    seed x training seed) at ``train_size``, as the paper averages its heatmaps over the runs
    of one g* (a run that stopped early keeps its last spectrum); plus each draw's target
    (epoch -1). Column ``runs`` counts the runs averaged."""
    index, cache, rows = _spectra_index(spectra), {}, []
    pick = selected[(selected["train_size"] == train_size) & ~selected["diverged"]]
    for (dataset, variant), group in pick.groupby(["dataset", "variant"]):
        runs = [_run_spectra(run, index, cache, train_size) for _, run in group.iterrows()]
        epochs = pd.RangeIndex(max(int(r.index.max()) for r in runs) + 1, name="epoch")
        mean = sum(r.reindex(epochs).ffill() for r in runs) / len(runs)
        first = group.iloc[0]
        rows.append(
            mean.reset_index().assign(
                dataset=dataset,
                variant=variant,
                method=first["method"],
                b=first["b"],
                runs=len(runs),
            )  # fmt: skip
        )
    for path in targets:
        target = SparseTarget.from_json(path)
        dense = dense_target_spectrum(target.coefficients(), target.n).numpy() * target.k
        row = pd.DataFrame([dense], columns=[f"f{i}" for i in range(len(dense))])
        rows.append(
            row.assign(
                epoch=-1, dataset=Path(path).stem, variant="target", method="target", b=np.nan
            )
        )
    return pd.concat(rows, ignore_index=True)


def synthetic_tables(runs) -> dict:
    """Experiment 2: selected models per pair and the runtime curves of the selected models."""
    records = _with_variants(read_runs(runs), split_b=True)
    keys = ["dataset", "n", "c", "draw", "variant", "method", "train_size", "data_seed"]
    selected = select_models(run_summaries(records, keys), keys + ["seed"])
    chosen = _selected_records(records, selected, keys).sort_values(keys + ["seed", "epoch"])
    run_keys = keys + ["seed"]
    chosen["cum_time"] = chosen.groupby(run_keys)["epoch_time"].cumsum()
    # The untrained network (epoch 0) is never a candidate for either curve.
    trained = chosen["epoch"] > 0
    val_mse, test_r2 = chosen["val_mse"].where(trained), chosen["test_r2"].where(trained)
    # Test R^2 of the best-validation epoch so far: what early stopping at that epoch reports.
    best_so_far = val_mse.groupby([chosen[k] for k in run_keys]).cummin() == val_mse
    chosen["stopped_test_r2"] = test_r2.where(best_so_far)
    chosen["stopped_test_r2"] = chosen.groupby(run_keys)["stopped_test_r2"].ffill()
    # The best test R^2 reached so far (the reference's max_test_r2): Figure 4b, panels I-II.
    chosen["max_test_r2"] = test_r2.groupby([chosen[k] for k in run_keys]).cummax()
    columns = ["cum_time", "stopped_test_r2", "max_test_r2"]
    filled = forward_fill_epochs(chosen, run_keys, columns)
    curves = (
        filled.groupby(["dataset", "n", "c", "draw", "variant", "epoch"])
        .agg(
            cum_time=("cum_time", "mean"),
            test_r2=("stopped_test_r2", "mean"),
            test_r2_sem=("stopped_test_r2", "sem"),
            max_test_r2=("max_test_r2", "mean"),
            max_test_r2_sem=("max_test_r2", "sem"),
        )
        .reset_index()
    )
    summary = summarize(selected, ["n", "c", "draw", "variant"])
    # Per-run curves of the models trained one at a time: the speed claim compares their
    # times to reach each R^2 level, unit by unit.
    timed = selected.loc[selected["timed_alone"] & ~selected["diverged"], run_keys]
    runs = chosen.merge(timed, on=run_keys)[[*run_keys, "b", "epoch", "cum_time", "max_test_r2"]]
    return {
        "synthetic_selected": selected,
        "synthetic_summary": _with_typed_curves(summary, selected, ["method", "b"]),
        "synthetic_curves": _with_typed_curves(curves, selected, ["method", "b"]),
        "synthetic_runs": runs.reset_index(drop=True),
    }


def real_tables(runs, baseline_runs) -> dict:
    """Experiment 3: networks (b tuned like any hyperparameter) and baselines, per pair."""
    keys = ["dataset", "variant", "method", "train_size", "data_seed"]
    frames = []
    if runs:
        records = _with_variants(read_runs(runs), split_b=False)
        frames.append(select_models(run_summaries(records, keys), keys + ["seed"]))
    if baseline_runs:
        base = read_runs(baseline_runs)
        base = base.assign(
            variant=base["method"],
            seed=-1,
            diverged=base["status"] != "ok",
            train_time=base["fit_time"],
        )
        frames.append(select_models(base, keys + ["seed"]))
    selected = pd.concat(frames, ignore_index=True)
    summary = summarize(selected, ["dataset", "variant", "train_size"])
    return {
        "real_selected": selected,
        # b is tuned like any hyperparameter here: a curve is a method, whatever its b
        "real_summary": _with_typed_curves(summary, selected, ["method"]),
    }


def experiment_tables(spec: AggregateSpec, runs=(), spectra=(), targets=(), baselines=()) -> dict:
    """An aggregation job's tables ({name: frame}, the names its spec's outputs give)."""
    if spec.experiment == "spectrum":
        return spectrum_tables(runs, spectra, targets, spec.figure_train_size)
    if spec.experiment == "synthetic":
        return synthetic_tables(runs)
    return real_tables(runs, baselines)
