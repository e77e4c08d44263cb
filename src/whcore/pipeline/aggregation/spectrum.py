"""Experiment 1's tables: spectral metrics of the selected models, epoch by epoch, and the
learned spectra's amplitudes by degree (Figures 1-3, A1-A4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.io import read_parquet_metadata
from ...core.spectrum import dense_target_spectrum
from ...core.wht import degree
from ...data.synthetic import SparseTarget
from .records import (
    HYPERPARAMETERS,
    parquet_files,
    read_runs,
    run_summaries,
    select_models,
    selected_records,
    with_variants,
)

__all__ = ["spectrum_tables"]


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
    records = with_variants(read_runs(runs), split_b=True)
    keys = ["dataset", "draw", "variant", "method", "train_size", "data_seed"]
    selected = select_models(run_summaries(records, keys), keys + ["seed"])
    metric_cols = [c for c in records.columns if c.startswith(("sae_", "energy_deg", "coef_"))] + [
        "val_mse",
        "train_mse",
    ]
    columns = keys + ["b", "seed", "epoch"] + metric_cols
    epochs = selected_records(records, selected, keys)[columns]
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
        key = (
            labels["dataset"],
            spec["method"],
            _params_key(params),
            data["train_size"],
            data["data_seed"],
        )
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
            )
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
    table = pd.concat(rows, ignore_index=True)
    return table.assign(b=table["b"].astype("Int64"))
