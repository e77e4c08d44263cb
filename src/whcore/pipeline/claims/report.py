"""All claims: evaluated from the tables present, corrected over each other, written."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ...core.io import atomic_path
from ..guards import CLAIMS_TITLE
from .exact import ablation_claims, entacmaea_claims
from .hashing import hashing_claims
from .real import real_claims
from .spectrum import spectrum_claims
from .stats import ALPHA, HOLDS, MIN_UNITS, NEARLY_ALL, SKIPPED, UNSURE, Claim, holm
from .synthetic import synthetic_claims

DESIGN = (
    "The unit of replication is the subsample: a g* draw, a train size and a data seed (a "
    "dataset, a train size and a data seed on real data; a forest with its own seed and split "
    "in the ablation). A unit's inputs, split and the seeds of its networks and baselines "
    "derive from the unit itself, so no two units share inputs, a split or an initialization; "
    "each method's training seeds are averaged within a unit, and tests pair units. Spectrum "
    "claims judge each run at the end of training (the mean over its last 10 epochs), as the "
    "figures show it; the other experiments at the epoch validation selects."
)

# The table that switches each group of checks on (its experiment ran).
CHECKS = {
    "spectrum_selected": spectrum_claims,
    "synthetic_selected": synthetic_claims,
    "real_selected": real_claims,
    "entacmaea_energy": entacmaea_claims,
}

NOT_CHECKABLE = [
    (
        "Training times on the paper's hardware (Figures 4b, 5b, A6, A7)",
        "times here are measured on this machine (CPU unless a GPU is used); ratios between "
        "methods are checked, absolute times are not comparable",
    ),
    (
        "HashWH scales to avGFP with b = 16 at the paper's settings (Section 5.2)",
        "only the full paper-scale run (GPU) trains that grid; smaller configurations drop it",
    ),
    (
        "The shape of the curves in Figures 1-3 beyond the checked properties",
        "a qualitative description; the checks above test its quantitative parts",
    ),
]


def evaluate_claims(tables: dict[str, pd.DataFrame], settings: dict | None = None) -> list[Claim]:
    """Every claim whose tables are present (the others listed as not evaluated), with the
    correction over all tested claims in ``across``. ``settings``: the runtime cell
    (runtime_n, runtime_c) of the speed claim."""
    claims = ablation_claims(tables) if any(t.startswith("ablation_") for t in tables) else []
    claims += hashing_claims()
    for table, check in CHECKS.items():
        if table in tables:
            claims += check(tables, settings)
        else:
            claims.append(
                Claim(check.__name__, "", "", "", SKIPPED,
                      details=f"table {table} not built (experiment off)")
            )  # fmt: skip
    correct_across(claims)
    return claims


def correct_across(claims: list[Claim]) -> None:
    """Holm over the decisive p-values of every tested claim: a claim that holds on its own
    keeps "holds" only if it survives; exact claims (no p-value) keep their verdict."""
    tested = [c for c in claims if c.p_value is not None and c.verdict != SKIPPED]
    adjusted = holm([c.p_value for c in tested])
    for claim, p in zip(tested, adjusted):
        if claim.verdict == HOLDS:
            claim.across = HOLDS if p < ALPHA else UNSURE
        else:
            claim.across = claim.verdict
    for claim in claims:
        if not claim.across:
            claim.across = claim.verdict


def format_p(p_value: float | None) -> str:
    """A claim's p-value as the report states it (empty where it has none)."""
    return "" if p_value is None or np.isnan(p_value) else f"{p_value:.3g}"


def _summary_table(claims: list[Claim]) -> list[str]:
    rows = [
        "| claim | verdict | after correction over all claims | units | effect |",
        "|---|---|---|---|---|",
    ]
    for c in claims:
        rows.append(f"| {c.id} | {c.verdict} | {c.across} | {c.units} | {c.effect} |")
    return rows


def _made_by(settings: dict) -> list[str]:
    """The run the report checks, and where the configuration that made it is recorded (the
    report's spec holds no digest of it: a setting that changes no result must not rerun it)."""
    run = settings.get("run_name")
    if run is None:
        return []
    return [
        f"Run `{run}` (results/{run}/), made by the configuration that "
        f"results/{run}/configuration.json names (its file and digest).",
        "",
    ]


def _what_scale_decides(claims: list[Claim]) -> list[str]:
    """How many of the claims tested over units this run's scale can decide: a cell with
    fewer than MIN_UNITS finished units gets no verdict."""
    tested = [c for c in claims if c.cells]
    if not tested:
        return []
    short = [c for c in tested if c.short_cells]
    if not short:
        return [
            f"Every cell of the {len(tested)} claims tested over units has at least {MIN_UNITS} "
            "finished units: this run's scale can decide each of them.",
            "",
        ]
    every = sum(c.short_cells == c.cells for c in short)
    some = len(short) - every
    cells = sum(c.cells for c in tested)
    return [
        f"What this run's scale can decide: a cell's verdict needs at least {MIN_UNITS} finished "
        f"units. In {every} of the {len(tested)} claims tested over units every cell has fewer, "
        "so they cannot hold here, whatever they measure"
        + (f"; {some} more have some cells with fewer" if some else "")
        + f" ({sum(c.short_cells for c in tested)} of the {cells} cells in all). An "
        "inconclusive verdict for want of units says nothing for or against the paper.",
        "",
    ]


def write_claims(claims: list[Claim], md_path, json_path, settings: dict | None = None) -> None:
    """claims.md and claims.json; ``settings`` (the claims job's) name the run."""
    counts = pd.Series([c.verdict for c in claims]).value_counts().to_dict()
    n_tested = sum(c.p_value is not None for c in claims)
    lines = [
        CLAIMS_TITLE,
        "",
        *_made_by(settings or {}),
        *_what_scale_decides(claims),
        "Verdicts: " + ", ".join(f"{v}: {n}" for v, n in counts.items()),
        "",
        DESIGN,
        "",
        f"One-sided paired t-tests at level {ALPHA}, Holm-corrected over the cells a claim "
        f"covers; a cell needs at least {MIN_UNITS} finished units; a method that diverged in "
        'more units than its rival cannot win a cell. "Nearly all" means at least '
        f"{NEARLY_ALL:.0%} of the cells hold and none is significantly worse. The column *after "
        f"correction* applies Holm once more over the {n_tested} claims with a test. Where a "
        "verdict is *inconclusive*, its section says how many units per cell would give the "
        "claim 80% power. Every test is calibrated by simulation (tests/test_calibration.py): "
        'on tables with no effect it says "holds" at most at its level, on planted effects '
        "with the power it predicts.",
        "",
        *_summary_table(claims),
        "",
    ]
    for c in claims:
        lines += [f"## {c.id}: **{c.verdict}**", ""]
        if c.quote:
            lines += [f"> {c.quote}", ""]
        lines += [f"Checked as: {c.test}", ""] if c.test else []
        for label, text in (
            ("source", c.source),
            ("units", c.units),
            ("effect", c.effect),
            ("uncertainty", c.uncertainty),
            ("p-value (claim, before the correction over claims)", format_p(c.p_value)),
            ("after correction over all claims", c.across),
            ("to settle it", c.needed),
            ("details", c.details),
        ):  # fmt: skip
            if text:
                lines.append(f"- {label}: {text}")
        lines.append("")
    lines += ["## Not checkable here", ""]
    lines += [f"- {what}: {why}." for what, why in NOT_CHECKABLE]
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text("\n".join(lines) + "\n")
    with atomic_path(json_path) as tmp:
        Path(tmp).write_text(json.dumps([asdict(c) for c in claims], indent=1))
