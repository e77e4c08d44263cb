"""Run records -> model selection: the steps every experiment's tables share.

Model selection follows the paper: for every (data seed, training seed) pair, the
hyperparameter configuration with the best validation R^2 (at its own best-validation epoch) is
chosen, and its test R^2 at that epoch is reported. Runs that diverged are counted, never
dropped silently: a pair whose configurations all diverged is reported as diverged.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ...core.methods import hyperparameter_names
from ..analyses.families import BASELINES

__all__ = [
    "HYPERPARAMETERS",
    "selected_records",
    "with_typed_curves",
    "with_variants",
    "divergence_report",
    "forward_fill_epochs",
    "parquet_files",
    "read_runs",
    "run_summaries",
    "select_models",
    "select_networks_and_baselines",
    "summarize",
    "variant_names",
]

# Columns that hold hyperparameters: every parameter of the registered network methods and
# baseline families (a parameter missing here would merge different configurations).
HYPERPARAMETERS = hyperparameter_names() + tuple(
    dict.fromkeys(p for info in BASELINES.values() for p in info.params)
)


def parquet_files(paths: Iterable[str | Path]) -> list[Path]:
    """The Parquet files of ``paths``: a file stands for itself, a folder (a training job's
    output) for the files in it, in name order."""
    files = []
    for path in map(Path, paths):
        files += sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    return files


def read_runs(paths: Iterable[str | Path], **identity) -> pd.DataFrame:
    """Concatenate run records (files, or training jobs' folders of them); ``identity``
    columns (e.g. dataset=...) are added to all."""
    frames = []
    for output in paths:  # a job's output: a file, or a training job's folder
        for path in parquet_files([output]):
            try:
                frames.append(pd.read_parquet(path))
            except Exception as err:
                raise ValueError(
                    f"{path}: cannot read run records ({err}); rerun the job that wrote it: "
                    f"snakemake --forcerun {output} (with your --configfile and --cores)"
                ) from err
    if not frames:
        raise ValueError("no run records to aggregate")
    return pd.concat(frames, ignore_index=True).assign(**identity)


def variant_names(runs: pd.DataFrame, split_b: bool) -> pd.Series:
    """The curve a run belongs to: the method, plus b for HashWH when b is not tuned."""
    names = runs["method"].astype(str)
    if split_b and "b" in runs:
        hashed = runs["method"] == "hashwh"
        names = names.where(~hashed, "hashwh_b" + runs["b"].fillna(0).astype(int).astype(str))
    return names


def _configuration_columns(runs: pd.DataFrame) -> list[str]:
    return [c for c in HYPERPARAMETERS if c in runs.columns]


# Scores read at a model's best-validation epoch where its records have them (test MSE and the
# Spearman correlation of a held-out fold of ProteinGym's protocol).
SCORES_AT_BEST = ("test_mse", "test_spearman")


def run_summaries(records: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per trained model (``keys`` + hyperparameters + seed): its best-validation epoch,
    validation and test R^2 there (and ``SCORES_AT_BEST`` where recorded), total training time, time to the best epoch, whether that
    time is the model's own (``timed_alone``; false: its share of a stacked model's time) and
    whether it diverged (with the epoch and reason)."""
    group = keys + _configuration_columns(records) + ["seed"]
    records = records.reset_index(drop=True)  # idxmin below needs unique labels
    for col in _configuration_columns(records):
        records[col] = records[col].fillna(-1)  # NaN keys would vanish in groupby
    records["cum_time"] = records.groupby(group, sort=False)["epoch_time"].cumsum()
    # The untrained network (epoch 0) is recorded for the curves but never selected.
    ok = records[(records["status"] == "ok") & (records["epoch"] > 0)]
    best = ok.loc[ok.groupby(group, sort=False)["val_mse"].idxmin()]
    scores = [c for c in SCORES_AT_BEST if c in best.columns]
    summary = best[group + ["epoch", "val_r2", "test_r2", *scores, "cum_time"]].rename(
        columns={"epoch": "best_epoch", "cum_time": "time_to_best"}
    )
    totals = records.groupby(group, sort=False).agg(
        epochs=("epoch", "max"), train_time=("epoch_time", "sum"), stack_size=("stack_size", "max")
    )
    totals["timed_alone"] = totals.pop("stack_size") == 1
    diverged = (
        records[records["status"] == "diverged"]
        .groupby(group, sort=False)
        .agg(diverged_epoch=("epoch", "min"), diverged_reason=("note", "first"))
    )
    out = totals.join(diverged).reset_index().merge(summary, on=group, how="left")
    out["diverged"] = out["diverged_epoch"].notna()
    for col in _configuration_columns(out):
        out[col] = out[col].replace(-1, np.nan)
    return out


def select_models(summaries: pd.DataFrame, pair_keys: list[str]) -> pd.DataFrame:
    """For each group of ``pair_keys`` (e.g. dataset, variant, size, data seed, seed) keep the
    configuration with the best validation R^2 among runs that did not diverge. Groups whose
    runs all diverged are kept as one row with ``diverged`` true and NaN scores; the column
    ``n_diverged_configs`` counts diverged configurations in every group."""
    frame = summaries.reset_index(drop=True)  # idxmax below needs unique labels
    frame["_score"] = frame["val_r2"].where(~frame["diverged"], -np.inf).fillna(-np.inf)
    counts = frame.groupby(pair_keys, sort=False)["diverged"].sum().rename("n_diverged_configs")
    chosen = frame.loc[frame.groupby(pair_keys, sort=False)["_score"].idxmax()]
    chosen = chosen.drop(columns="_score").merge(counts.reset_index(), on=pair_keys)
    lost = chosen["diverged"] | chosen["val_r2"].isna()
    scores = ["val_r2", "test_r2", *(c for c in SCORES_AT_BEST if c in chosen.columns)]
    chosen.loc[lost, scores] = np.nan
    chosen["diverged"] = lost
    return chosen.reset_index(drop=True)


def summarize(selected: pd.DataFrame, keys: list[str], value: str = "test_r2") -> pd.DataFrame:
    """Mean, standard deviation, standard error and counts of ``value`` over pairs."""
    grouped = selected.groupby(keys, sort=True)
    out = grouped[value].agg(mean="mean", std="std", count="count")
    out["sem"] = out["std"] / np.sqrt(out["count"].clip(lower=1))
    out["n_diverged"] = grouped["diverged"].sum()
    if "train_time" in selected:
        out["train_time"] = grouped["train_time"].mean()
    return out.reset_index()


def forward_fill_epochs(
    frame: pd.DataFrame, run_keys: list[str], columns: list[str], last_epoch: int | None = None
) -> pd.DataFrame:
    """Extend every run's per-epoch values to a common last epoch by carrying its final values
    forward: after early stopping a network no longer changes, so curves averaged over runs of
    different lengths compare like with like."""
    last_epoch = int(frame["epoch"].max()) if last_epoch is None else last_epoch
    epochs = pd.Index(range(last_epoch + 1), name="epoch")
    filled = []
    for key, run in frame.groupby(run_keys, sort=False):
        run = run.set_index("epoch")[columns].reindex(epochs).ffill().reset_index()
        for name, value in zip(run_keys, key if isinstance(key, tuple) else (key,)):
            run[name] = value
        filled.append(run)
    return pd.concat(filled, ignore_index=True)


def divergence_report(selected: pd.DataFrame) -> str:
    """One line for logs: how many trained models diverged, and how many selections had
    nothing but diverged configurations (a table of ``select_models``)."""
    if "n_diverged_configs" not in selected or not len(selected):
        return "diverged: nothing to report"
    models = int(selected["n_diverged_configs"].sum())
    lost = selected[selected["diverged"]]
    line = (
        f"diverged: {models} trained model(s) (configuration x seed) diverged and were left "
        f"out of model selection; {len(lost)} of {len(selected)} selections had only diverged "
        "configurations and are reported as diverged (NaN scores)"
    )
    if len(lost) and "variant" in lost:
        line += ": " + ", ".join(f"{v} x {n}" for v, n in lost["variant"].value_counts().items())
    return line


def with_variants(records: pd.DataFrame, split_b: bool) -> pd.DataFrame:
    """Records with their curve id (``variant``); ``method`` and ``b`` stay typed columns and
    are what figures and claims read (``b`` a nullable integer, missing where a method has
    none)."""
    records = records.assign(variant=variant_names(records, split_b))
    b = records["b"] if "b" in records else pd.Series(np.nan, index=records.index)
    records["b"] = b.astype("Int64")
    for col in ("test_r2", "test_mse"):
        if col not in records:
            records[col] = np.nan
    return records


def with_typed_curves(table: pd.DataFrame, selected: pd.DataFrame, columns) -> pd.DataFrame:
    """``table`` (one row per curve id and more keys) with each curve's typed ``columns``."""
    typed = selected[["variant", *columns]].drop_duplicates("variant")
    return table.merge(typed, on="variant", how="left")


def selected_records(records, selected, keys) -> pd.DataFrame:
    """The per-epoch records of the selected models only."""
    config = [c for c in HYPERPARAMETERS if c in records.columns]
    chosen = selected.loc[~selected["diverged"], keys + config + ["seed"]]
    left = records.copy()
    for col in config:
        left[col] = left[col].fillna(-1)
        chosen = chosen.assign(**{col: chosen[col].fillna(-1)})
    return left.merge(chosen, on=keys + config + ["seed"])


def select_networks_and_baselines(runs, baseline_runs, keys: list[str]) -> pd.DataFrame:
    """The selected configuration of every network method (b a hyperparameter like lam) and
    baseline family per ``keys`` and training seed (a baseline: one fit, seed -1)."""
    frames = []
    if runs:
        records = with_variants(read_runs(runs), split_b=False)
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
    if not frames:
        raise ValueError("no run records to aggregate")
    return pd.concat(frames, ignore_index=True)


def selected_divergence(tables: dict[str, pd.DataFrame]) -> str:
    """The log line of an aggregation: ``divergence_report`` of its table of selected models
    (the one named ``<experiment>_selected``)."""
    (name,) = [name for name in tables if name.endswith("_selected")]
    return divergence_report(tables[name])
