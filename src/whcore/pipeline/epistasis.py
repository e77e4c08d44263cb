"""The epistasis a network learned: the Walsh-Hadamard spectrum of a selected network on a real
dataset, as its top interactions (named by sites and residues) and its energy by degree.

Training jobs keep records, not weights, so the selected network is trained again: the
configuration, training seed and best-validation epoch that model selection picked (the
``real_selected`` table) on the same split with the same training settings. Training is
deterministic, so this is the selected network (up to float32 rounding where the original job
stacked several networks; the table reports both test R^2 values to show it). Its spectrum is
exact for n <= 20 (``whcore.core.spectrum.exact_spectrum``, all 2^n inputs) and recovered with
SPRIGHT above (``whcore.core.spright``, the sparse transform EN-S uses).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..core.methods import METHOD_INFO
from ..core.models import predict
from ..core.spectrum import MAX_EXACT_N, exact_spectrum
from ..core.spright import decode, design, sample_values
from ..core.training import Member, TrainConfig, train_members
from ..core.wht import int_to_bits
from ..data.loading import load_job_data, training_seed
from .canonical import canonical
from .jobspec import EpistasisSpec

__all__ = [
    "energy_by_degree",
    "network_spectrum",
    "selected_configurations",
    "top_interactions",
    "learned_epistasis",
]


def selected_configurations(
    selected: pd.DataFrame, dataset: str, methods: list[str], train_size: int, data_seed: int
) -> list[dict]:
    """Per method, the model selection's pick on (train size, data seed) for the first training
    seed: {method, params, seed, best_epoch, test_r2}. Methods whose picks all diverged are
    left out."""
    rows = selected[
        (selected["dataset"] == dataset)
        & selected["method"].isin(methods)
        & (selected["train_size"] == train_size)
        & (selected["data_seed"] == data_seed)
        & ~selected["diverged"].astype(bool)
    ]
    picks = []
    for method in methods:
        mine = rows[rows["method"] == method].sort_values("seed")
        if mine.empty:
            continue
        row = mine.iloc[0]
        params = {p: row[p] for p in METHOD_INFO[method].params if p in row and pd.notna(row[p])}
        picks.append(
            {
                "method": method,
                "params": canonical({k: float(v) for k, v in params.items()}),
                "seed": int(row["seed"]),
                "best_epoch": int(row["best_epoch"]),
                "test_r2": float(row["test_r2"]),
            }
        )
    return picks


def network_spectrum(model, n: int, m: int = 10, d: int = 3, seed: int = 0):
    """The spectrum of a network on {0,1}^n as (bits (K, n) uint8, coefficients (K,), how):
    every coefficient for n <= 20, else SPRIGHT's recovered sparse spectrum."""
    if n <= MAX_EXACT_N:
        coefs = exact_spectrum(model, n).reshape(-1).numpy()
        bits = int_to_bits(torch.arange(2**n), n).numpy().astype(np.uint8)
        return bits, coefs, "exact"
    param = next(model.parameters())

    def f(x):
        return predict(model, torch.as_tensor(x, dtype=param.dtype, device=param.device))

    des = design(n, min(m, n), d, seed)
    found = decode(des, sample_values(lambda x: f(x).reshape(-1), des))
    return found.bits.astype(np.uint8), found.coefs, f"SPRIGHT (m={min(m, n)}, d={d})"


def top_interactions(bits: np.ndarray, coefs: np.ndarray, names: list[str], top: int):
    """The ``top`` largest |coefficients| but the constant, ties by the first listed: rank,
    degree, interaction (``site39=A x site41=L``), coefficient, energy."""
    degree = bits.sum(axis=1)
    candidates = np.flatnonzero(degree > 0)
    order = candidates[np.argsort(-np.abs(coefs[candidates]), kind="stable")][:top]
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(order) + 1),
            "degree": degree[order].astype(int),
            "interaction": [" x ".join(names[i] for i in np.flatnonzero(bits[k])) for k in order],
            "coefficient": coefs[order],
            "energy": coefs[order] ** 2,
        }
    )


def energy_by_degree(bits: np.ndarray, coefs: np.ndarray, n: int) -> pd.DataFrame:
    """Energy (coefficient^2) per degree 1..n, the constant left out, and its share."""
    degree = bits.sum(axis=1)
    energy = np.where(degree > 0, coefs**2, 0.0)
    table = pd.DataFrame(
        {
            "degree": np.arange(n + 1),
            "count": np.bincount(degree, weights=(degree > 0) & (coefs != 0), minlength=n + 1),
            "energy": np.bincount(degree, weights=energy, minlength=n + 1),
        }
    )
    total = table["energy"].sum()
    table["fraction"] = table["energy"] / total if total > 0 else 0.0
    return table[table["degree"] > 0].reset_index(drop=True)


def _retrain(data, unit: int, pick: dict, training: dict, device: str, log):
    """Train the picked configuration again up to its best epoch; (model, records)."""
    captured = {}

    def keep(model, epoch, members):
        if epoch == pick["best_epoch"]:
            captured["model"] = model
        return {}

    settings = TrainConfig(
        **{**training, "epochs": pick["best_epoch"], "vectorize": False},
        device=device,
        log_every=0,
    )
    member = Member(0, dict(pick["params"]), training_seed(unit, pick["seed"]))
    records = train_members(data, pick["method"], [member], settings, keep, log)
    if "model" not in captured:
        raise RuntimeError(
            f"{pick['method']} {pick['params']} seed {pick['seed']} stopped before its "
            f"selected epoch {pick['best_epoch']} when trained again"
        )
    return captured["model"], records


def learned_epistasis(spec: EpistasisSpec, selected: pd.DataFrame, device: str = "cpu", log=print):
    """The tables of an epistasis job: (top interactions, energy by degree), one block of rows
    per method (standard and HashWH, as selected)."""
    split = spec.data
    data, _, unit = load_job_data(split.to_mapping())
    names = [c for c in pd.read_parquet(split.path).columns if c != "y"]
    n = len(names)
    picks = selected_configurations(
        selected, spec.dataset, spec.methods, split.train_size, split.data_seed
    )
    if not picks:
        raise ValueError(
            f"{spec.dataset}: real_selected has no finished {' or '.join(spec.methods)} "
            f"network at train size {split.train_size}, data seed {split.data_seed}"
        )
    tops, energies = [], []
    for pick in picks:
        model, records = _retrain(data, unit, pick, dict(spec.training), device, log)
        at_best = records[records["epoch"] == pick["best_epoch"]].iloc[0]
        bits, coefs, how = network_spectrum(model, n, **spec.spright)
        log(
            f"{pick['method']} {pick['params']} seed {pick['seed']} epoch {pick['best_epoch']}: "
            f"test R^2 {at_best['test_r2']:.4f} (selected: {pick['test_r2']:.4f}); spectrum {how}"
        )
        identity = {
            "dataset": spec.dataset,
            "method": pick["method"],
            "params": str(pick["params"]),
            "seed": pick["seed"],
            "best_epoch": pick["best_epoch"],
            "spectrum": how,
        }
        top = top_interactions(bits, coefs, names, spec.top).assign(**identity)
        top["test_r2_selected"] = pick["test_r2"]
        top["test_r2_retrained"] = float(at_best["test_r2"])
        tops.append(top)
        energies.append(energy_by_degree(bits, coefs, n).assign(**identity))
    return pd.concat(tops, ignore_index=True), pd.concat(energies, ignore_index=True)
