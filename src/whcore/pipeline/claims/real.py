"""Section 5.2 (Figure 5a): HashWH against every rival on the real datasets.

Units are subsamples (data seeds) within each (dataset, train size); a network's value is its
mean over training seeds, a baseline's is its one fit per subsample."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ..analyses.families import BASELINES, PAPER_BASELINES
from .cells import compare_cells, paired, side, unit_means
from .claim import Claim, combine, paired_claim, skipped
from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS, NEARLY_ALL, UNSURE
from .sensitivity import nearly_all_line
from .sheet import wording
from .verdicts import refute

RUN = ["dataset", "train_size", "data_seed", "seed"]
UNIT = ["dataset", "train_size", "data_seed"]


def best_hashwh(selected: pd.DataFrame, value: str = "test_r2") -> pd.DataFrame:
    """Per run, HashWH with the hash size that validates best (b is a hyperparameter on real
    data); a run whose every hash size diverged counts as diverged."""
    hashed = selected[selected["method"] == "hashwh"]
    score = hashed["val_r2"].where(~hashed["diverged"], -np.inf).fillna(-np.inf)
    best = hashed.loc[score.groupby([hashed[k] for k in RUN]).idxmax()]
    return side(best, RUN, value)


def _beats_wording(rival: str):
    name = {"standard": "the standard network", "ens": "EN-S"}.get(rival, rival)
    return wording(f"real_hashwh_beats_{rival}", NEARLY_ALL=NEARLY_ALL, name=name)


def real_claims(tables, settings=None) -> list[Claim]:
    selected = tables["real_selected"]
    rivals = ["standard", "ens", *PAPER_BASELINES]
    said = {r: _beats_wording(r) for r in rivals}
    if not (selected["method"] == "hashwh").any():
        return [
            skipped(f"real_hashwh_beats_{r}", said[r].quote, said[r].source, "no HashWH runs")
            for r in rivals
        ]
    hashwh = unit_means(best_hashwh(selected), UNIT)
    claims = []
    for rival in rivals:
        cid = f"real_hashwh_beats_{rival}"
        quote, test, source = said[rival]
        rows = selected[selected["variant"] == rival]
        if rows.empty:
            claims.append(skipped(cid, quote, source, f"no {rival} runs in this configuration"))
            continue
        pairs = paired(hashwh, unit_means(side(rows, RUN, "test_r2"), UNIT))
        cell = ["dataset", "train_size"]
        claim = paired_claim(
            cid,
            quote,
            test,
            source,
            pairs,
            cell,
            f"test R^2 (HashWH - {rival})",
            ("HashWH", rival),
            NEARLY_ALL,
            unit=UNIT,
        )
        claim.sensitivity = nearly_all_line(NEARLY_ALL, compare_cells(pairs, cell))
        claims.append(claim)
    claims += [low_data_claim(selected, hashwh), faster_than_ens_claim(selected)]
    return claims + [lasso_fastest_claim(selected, hashwh)]


def low_data_claim(selected: pd.DataFrame, hashwh: pd.DataFrame) -> Claim:
    cid = "real_gain_largest_low_data"
    quote, test, source = wording(cid)
    standard = selected[selected["variant"] == "standard"]
    if standard.empty:
        return skipped(cid, quote, source, "no standard network runs")
    gains = paired(hashwh, unit_means(side(standard, RUN, "test_r2"), UNIT))
    gains = gains[~gains["a_diverged"] & ~gains["b_diverged"]].assign(gain=lambda f: f.a - f.b)
    rows = []
    for dataset, frame in gains.groupby("dataset", sort=True):
        sizes = sorted(frame["train_size"].unique())
        small = frame.loc[frame["train_size"] == sizes[0], "gain"].dropna()
        large = frame.loc[frame["train_size"] == sizes[-1], "gain"].dropna()
        enough = len(sizes) > 1 and min(len(small), len(large)) >= MIN_UNITS
        rows.append(
            {
                "dataset": dataset,
                "small": sizes[0],
                "large": sizes[-1],
                "units": f"{len(small)} + {len(large)}",
                "difference": small.mean() - large.mean() if enough else np.nan,
                "p_greater": _welch(small, large, "greater") if enough else np.nan,
                "p_less": _welch(small, large, "less") if enough else np.nan,
            }
        )
    cells = pd.DataFrame(rows)
    if cells.empty or cells["p_greater"].isna().all():
        return skipped(cid, quote, source, "needs two train sizes with finished units")
    # Every dataset: each at ALPHA (intersection-union); refuted: Holm over the datasets.
    larger = cells["p_greater"].to_numpy(float) < ALPHA
    adjusted, p_refute, refute_tests = refute(cells["p_less"])
    smaller = np.nan_to_num(adjusted, nan=1.0) < ALPHA
    verdict = FAILS if smaller.any() else HOLDS if larger.all() else UNSURE
    effect = "; ".join(
        f"{r.dataset}: gain at {r.small} minus gain at {r.large} {r.difference:+.4f}"
        for r in cells.itertuples()
    )
    return Claim(
        cid,
        quote,
        test,
        source,
        verdict,
        effect,
        "",
        "; ".join(f"{r.dataset}: {r.units} units (subsamples)" for r in cells.itertuples()),
        f"larger at the smallest size in {int(larger.sum())} of {len(cells)} datasets "
        f"(each at {ALPHA:g}), significantly smaller in {int(smaller.sum())} (Holm over "
        "the datasets)",
        float(np.nanmax(cells["p_greater"])),
        p_refute=p_refute,
        refute_tests=refute_tests,
        cells=len(cells),
    )


def _welch(a: pd.Series, b: pd.Series, alternative: str) -> float:
    return float(stats.ttest_ind(a, b, equal_var=False, alternative=alternative).pvalue)


def faster_than_ens_claim(selected: pd.DataFrame) -> Claim:
    cid = "real_hashwh_faster_than_ens"
    quote, test, source = wording(cid)
    # Baselines have no timed_alone (NA): they are not timed per epoch.
    alone = selected["timed_alone"] if "timed_alone" in selected else False
    timed = selected[pd.Series(alone, index=selected.index).fillna(False).astype(bool)]
    if not (timed["variant"] == "ens").any() or not (timed["method"] == "hashwh").any():
        return skipped(cid, quote, source, "no EN-S and HashWH runs timed one at a time")
    timed = timed.assign(log_time=-np.log10(timed["train_time"].clip(lower=1e-9)))
    hashwh = unit_means(best_hashwh(timed, "log_time"), UNIT)
    ens = unit_means(side(timed[timed["variant"] == "ens"], RUN, "log_time"), UNIT)
    return paired_claim(
        cid,
        quote,
        test,
        source,
        paired(hashwh, ens),
        ["dataset", "train_size"],
        "log10 training time (EN-S - HashWH)",
        ("HashWH", "EN-S"),
        unit=UNIT,
    )


def timed_one_at_a_time(selected: pd.DataFrame) -> pd.DataFrame:
    """The rows whose training time is the model's own: every baseline fit, and the networks
    timed one at a time (``timed_alone``), with ``log_time`` = -log10 of the time (higher:
    faster)."""
    missing = pd.Series(pd.NA, index=selected.index)
    alone = selected["timed_alone"] if "timed_alone" in selected else missing
    own = selected["method"].isin(list(BASELINES)) | alone.fillna(False).astype(bool)
    timed = selected[own]
    return timed.assign(log_time=-np.log10(timed["train_time"].clip(lower=1e-9)))


def lasso_fastest_claim(selected: pd.DataFrame, hashwh: pd.DataFrame) -> Claim:
    cid = "real_lasso_fastest_poor_generalization"
    quote, test, source = wording(cid, NEARLY_ALL=NEARLY_ALL)
    lasso_rows = selected[selected["variant"] == "lasso"]
    if lasso_rows.empty or "train_time" not in selected:
        return skipped(cid, quote, source, "no timed Lasso fits in this configuration")
    timed = timed_one_at_a_time(selected)
    lasso = unit_means(side(timed[timed["variant"] == "lasso"], RUN, "log_time"), UNIT)
    others = sorted({"standard", "ens", *PAPER_BASELINES} - {"lasso"})
    rivals = {
        v: unit_means(side(timed[timed["variant"] == v], RUN, "log_time"), UNIT)
        for v in others
        if (timed["variant"] == v).any()
    }
    if (timed["method"] == "hashwh").any():
        rivals["hashwh"] = unit_means(best_hashwh(timed, "log_time"), UNIT)
    if not rivals:
        return skipped(cid, quote, source, "no other method timed one at a time")
    pairs = pd.concat(
        [paired(lasso, other).assign(method=name) for name, other in rivals.items()],
        ignore_index=True,
    )
    fastest = paired_claim(
        cid,
        quote,
        test,
        source,
        pairs,
        ["dataset", "train_size", "method"],
        "log10 training time (rival - Lasso)",
        ("Lasso", "rival"),
        unit=UNIT,
    )
    r2 = paired(hashwh, unit_means(side(lasso_rows, RUN, "test_r2"), UNIT))
    poorer = paired_claim(
        cid,
        quote,
        test,
        source,
        r2,
        ["dataset", "train_size"],
        "test R^2 (HashWH - Lasso)",
        ("HashWH", "Lasso"),
        NEARLY_ALL,
        unit=UNIT,
    )
    claim = combine(fastest, poorer, ("fastest", "usually poorer than HashWH"))
    claim.details += f"; rivals with their own times: {', '.join(sorted(rivals))}"
    cells = compare_cells(r2, ["dataset", "train_size"])
    claim.sensitivity = f"usually poorer: {nearly_all_line(NEARLY_ALL, cells)}"
    return claim
