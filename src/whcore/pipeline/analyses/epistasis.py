"""The epistasis a network learned: the Walsh-Hadamard spectrum of a selected network on a real
dataset, as its top interactions (named by sites and residues) and its energy by degree.

Training jobs keep records, not weights, so the selected network is trained again: the
configuration, training seed and best-validation epoch that model selection picked (the
``real_selected`` table) on the same split with the same training settings. Training is
deterministic, so this is the selected network (up to float32 rounding where the original job
stacked several networks; the table reports both test R^2 values to show it). Its spectrum is
exact for n <= 20 (``whcore.core.spectrum.exact_spectrum``, all 2^n inputs) and recovered with
SPRIGHT above (``whcore.core.spright``, the sparse transform EN-S uses).

Sites. A one-hot feature ``site39=A`` belongs to site 39; a mutated-site feature ``site39`` (and
a feature of a 0/1 table) is a site of its own. The spectrum is taken over the binary cube of
the features; with one-hot features most of that cube is not a sequence (two residues at one
site), so a term with two features of one site (``site3=A x site3=U``) is a *within-site*
contrast, never 1 on a sequence: it is reported apart, never among the interactions. The
between-site terms are aggregated to *site sets* (the energy of ``{39, 41}`` is the sum of the
squared coefficients of every term whose features lie at sites 39 and 41, one at each), which
give the site-by-site pairwise heatmap and the energy by number of sites. The basis is stated in
every table (column ``basis``) and in the figure.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import torch

from ...core.methods import METHOD_INFO
from ...core.models import predict
from ...core.spectrum import MAX_EXACT_N, exact_spectrum
from ...core.spright import decode, design, sample_values
from ...core.training import Member, TrainConfig, train_members
from ...core.wht import int_to_bits
from ...data.loading import load_job_data, training_seed
from ..runtime.canonical import canonical

__all__ = [
    "SiteMap",
    "energy_by_degree",
    "energy_by_site_set",
    "network_spectrum",
    "selected_configurations",
    "top_interactions",
    "learned_epistasis",
]

_ONEHOT = re.compile(r"(.+?)=(.+)")
BETWEEN, WITHIN = "between sites", "within a site"


class SiteMap:
    """The site of every feature: ``site39=A`` -> ``site39`` when every feature is one-hot
    (``<site>=<residue>``), else each feature is its own site (mutated sites, 0/1 tables)."""

    def __init__(self, names: list[str]):
        matches = [_ONEHOT.fullmatch(name) for name in names]
        self.onehot = bool(names) and all(m is not None for m in matches)
        labels = [m.group(1) for m in matches] if self.onehot else list(names)
        self.sites = list(dict.fromkeys(labels))
        index = {site: k for k, site in enumerate(self.sites)}
        self.of_feature = np.array([index[label] for label in labels], dtype=np.int64)
        self.names = list(names)

    @property
    def basis(self) -> str:
        if self.onehot:
            return (
                "Walsh-Hadamard over the binary cube of the one-hot features (off-sequence "
                "inputs included; within-site contrasts reported apart); site sets aggregate "
                "the between-site terms"
            )
        return "Walsh-Hadamard over the binary cube of the features (each feature a site)"

    def counts(self, bits: np.ndarray) -> np.ndarray:
        """(terms, sites): how many features of each site a term has."""
        onehot = np.zeros((len(self.of_feature), len(self.sites)), dtype=np.int64)
        onehot[np.arange(len(self.of_feature)), self.of_feature] = 1
        return bits.astype(np.int64) @ onehot

    def label(self, members) -> str:
        """A site set as text: ``39,41`` for sites named ``site<k>``, else the names."""
        names = [self.sites[k] for k in members]
        if all(re.fullmatch(r"site\d+", name) for name in names):
            return ",".join(name[4:] for name in names)
        return ",".join(names)


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


def top_interactions(
    bits: np.ndarray, coefs: np.ndarray, names: list[str], top: int, sites: SiteMap | None = None
):
    """The ``top`` largest |coefficients| but the constant, ties by the first listed, of each
    kind: first the terms between sites (``kind`` "between sites": main effects and
    interactions, ranked 1..top), then, for one-hot features, the within-site contrasts apart
    (``kind`` "within a site", ranked 1..top of their own). Columns: rank, kind, degree (number
    of sites), features (number of features), sites (``39,41``), interaction
    (``site39=A x site41=L``), coefficient, energy."""
    sites = sites or SiteMap(names)
    counts = sites.counts(bits)
    within = (counts > 1).any(axis=1)
    nonzero = bits.sum(axis=1) > 0
    blocks = []
    for kind, mask in ((BETWEEN, nonzero & ~within), (WITHIN, nonzero & within)):
        candidates = np.flatnonzero(mask)
        order = candidates[np.argsort(-np.abs(coefs[candidates]), kind="stable")][:top]
        if kind == WITHIN and not len(order):
            continue
        blocks.append(
            pd.DataFrame(
                {
                    "rank": np.arange(1, len(order) + 1),
                    "kind": kind,
                    "degree": (counts[order] > 0).sum(axis=1).astype(int),
                    "features": bits[order].sum(axis=1).astype(int),
                    "sites": [sites.label(np.flatnonzero(counts[k])) for k in order],
                    "interaction": [
                        " x ".join(names[i] for i in np.flatnonzero(bits[k])) for k in order
                    ],
                    "coefficient": coefs[order],
                    "energy": coefs[order] ** 2,
                }
            )
        )
    return pd.concat(blocks, ignore_index=True)


def energy_by_site_set(bits: np.ndarray, coefs: np.ndarray, sites: SiteMap) -> pd.DataFrame:
    """The energy of every site set over its between-site terms (``{39, 41}``: every term with
    one feature at site 39 and one at site 41), largest first: rank, sites, degree (number of
    sites), terms, energy, fraction (of all energy but the constant, within-site included)."""
    counts = sites.counts(bits)
    energy = coefs.astype(np.float64) ** 2
    keep = (counts.max(axis=1, initial=0) == 1) & (coefs != 0)
    total = energy[bits.sum(axis=1) > 0].sum()
    if not keep.any():
        return pd.DataFrame(
            columns=["rank", "sites", "degree", "terms", "energy", "fraction"]
        ).astype({"rank": int, "degree": int, "terms": int, "energy": float, "fraction": float})
    masks, inverse = np.unique(counts[keep] > 0, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    sums = np.bincount(inverse, weights=energy[keep], minlength=len(masks))
    terms = np.bincount(inverse, minlength=len(masks))
    order = np.argsort(-sums, kind="stable")
    table = pd.DataFrame(
        {
            "sites": [sites.label(np.flatnonzero(masks[k])) for k in order],
            "degree": masks[order].sum(axis=1).astype(int),
            "terms": terms[order].astype(int),
            "energy": sums[order],
        }
    )
    table = table[table["degree"] > 0].reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    table["fraction"] = table["energy"] / total if total > 0 else 0.0
    return table


def energy_by_degree(
    bits: np.ndarray, coefs: np.ndarray, n: int, sites: SiteMap | None = None
) -> pd.DataFrame:
    """Energy (coefficient^2) per number of sites 1..(sites), the constant left out, and its
    share of all energy but the constant; with one-hot features the within-site contrasts are
    rows of their own (``kind`` "within a site", by their number of sites), left out of the
    "between sites" rows."""
    sites = sites or SiteMap([f"x{i}" for i in range(n)])
    counts = sites.counts(bits)
    degree = (counts > 0).sum(axis=1)
    within = (counts > 1).any(axis=1)
    energy = np.where(degree > 0, coefs.astype(np.float64) ** 2, 0.0)
    total = energy.sum()
    size = len(sites.sites) + 1
    blocks = []
    for kind, mask in ((BETWEEN, ~within), (WITHIN, within)):
        if kind == WITHIN and not mask.any():
            continue
        blocks.append(
            pd.DataFrame(
                {
                    "kind": kind,
                    "degree": np.arange(size),
                    "count": np.bincount(
                        degree, weights=mask & (degree > 0) & (coefs != 0), minlength=size
                    ),
                    "energy": np.bincount(
                        degree, weights=np.where(mask, energy, 0.0), minlength=size
                    ),
                }
            )
        )
    table = pd.concat(blocks, ignore_index=True)
    table["fraction"] = table["energy"] / total if total > 0 else 0.0
    table = table[table["degree"] > 0]
    table = table[(table["kind"] == BETWEEN) | (table["energy"] > 0)]
    return table.reset_index(drop=True)


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


def learned_epistasis(
    split,
    selected: pd.DataFrame,
    *,
    dataset: str,
    methods,
    training: dict,
    spright: dict,
    top: int,
    device: str = "cpu",
    log=print,
):
    """The learned epistasis of ``dataset``'s selected networks of ``methods`` on ``split`` (a
    table's split, ``whcore.data.loading.load_job_data``): (top interactions, energy by number
    of sites, energy by site set), one block of rows per method (standard and HashWH, as
    selected in ``selected``, the real_selected table), and the basis of the spectrum (one
    line, also the tables' column ``basis``). Each network is trained again with ``training``;
    its spectrum is exact for n <= 20, else SPRIGHT's with ``spright``'s settings; ``top``
    interactions are kept."""
    data, _, unit = load_job_data(split)
    names = [c for c in pd.read_parquet(split.path).columns if c != "y"]
    n = len(names)
    sites = SiteMap(names)
    picks = selected_configurations(selected, dataset, methods, split.train_size, split.data_seed)
    if not picks:
        raise ValueError(
            f"{dataset}: real_selected has no finished {' or '.join(methods)} "
            f"network at train size {split.train_size}, data seed {split.data_seed}"
        )
    tops, energies, site_sets = [], [], []
    for pick in picks:
        model, records = _retrain(data, unit, pick, dict(training), device, log)
        at_best = records[records["epoch"] == pick["best_epoch"]].iloc[0]
        bits, coefs, how = network_spectrum(model, n, **spright)
        log(
            f"{pick['method']} {pick['params']} seed {pick['seed']} epoch {pick['best_epoch']}: "
            f"test R^2 {at_best['test_r2']:.4f} (selected: {pick['test_r2']:.4f}); spectrum {how}"
        )
        identity = {
            "dataset": dataset,
            "method": pick["method"],
            "params": str(pick["params"]),
            "seed": pick["seed"],
            "best_epoch": pick["best_epoch"],
            "spectrum": how,
            "basis": sites.basis,
        }
        ranked = top_interactions(bits, coefs, names, top, sites).assign(**identity)
        ranked["test_r2_selected"] = pick["test_r2"]
        ranked["test_r2_retrained"] = float(at_best["test_r2"])
        tops.append(ranked)
        energies.append(energy_by_degree(bits, coefs, n, sites).assign(**identity))
        site_sets.append(energy_by_site_set(bits, coefs, sites).assign(**identity))
    return (
        pd.concat(tops, ignore_index=True),
        pd.concat(energies, ignore_index=True),
        pd.concat(site_sets, ignore_index=True),
        sites.basis,
    )
