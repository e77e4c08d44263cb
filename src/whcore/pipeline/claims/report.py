"""All claims: evaluated from the tables present, corrected over each other, written."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control

from ...core.io import atomic_path
from ..runtime.marks import CLAIMS_TITLE
from .claim import Claim
from .hashing import hashing_claims
from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS, NEARLY_ALL, SKIPPED, UNSURE
from .scope import hashing_scope
from .verdicts import holm

DESIGN = (
    "The unit of replication is the g* draw on synthetic data (its data seeds share the target, "
    "so each method's value is averaged over them and over training seeds within the draw), "
    "the subsample on real data (a dataset, a train size and a data seed), a forest with its own "
    "seed and split in the ablation. A unit's inputs, split and the seeds of its networks and "
    "baselines derive from the unit itself, so no two units share inputs, a split or an "
    "initialization; tests pair units. Spectrum claims judge each run at the end of training "
    "(the mean over its last 10 epochs), as the figures show it; the other experiments at the "
    "epoch validation selects."
)


@dataclass(frozen=True)
class ClaimGroup:
    """A group of claims as the engine is handed it (``experiments.claim_groups()``): a new
    claim is one more claim of a group, a new group one more experiment's."""

    experiment: str  # whose units its claims rest on (the planner adds units to it); "" for none
    check: Callable  # (tables, settings) -> [Claim]
    table: str | None = None  # the table that switches it on; absent, one line says so
    prefix: str | None = None  # or the tables it reads, one per dataset; absent, no line
    scope: Callable | None = None  # (claim, tables) -> the scope of a claim stating none
    then: Callable | None = None  # (its claims, tables) -> None, run on them once made

    def evaluate(self, tables: dict[str, pd.DataFrame], settings: dict | None) -> list[Claim]:
        """Its claims on ``tables``, or the line saying its table was not built."""
        if self.prefix is not None and not any(t.startswith(self.prefix) for t in tables):
            return []
        if self.table is not None and self.table not in tables:
            details = f"table {self.table} not built (experiment off)"
            claims = [Claim(self.check.__name__, "", "", "", SKIPPED, details=details)]
        else:
            claims = self.check(tables, settings)
            if self.experiment:
                claims = with_experiment(claims, self.experiment)
            if self.then is not None:
                self.then(claims, tables)
        for claim in claims:
            if not claim.scope and self.scope is not None:
                claim.scope = self.scope(claim, tables)
        return claims


# The hashing lemma's identities, checked by simulation: no experiment's, always in the report.
IDENTITIES = ClaimGroup("", hashing_claims, scope=hashing_scope)

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


def evaluate_claims(
    tables: dict[str, pd.DataFrame], settings: dict | None, groups: list[ClaimGroup]
) -> list[Claim]:
    """Every claim of ``groups`` whose tables are present (the others listed as not
    evaluated), with the correction over all tested claims in ``across``. ``settings``: the
    runtime cell (runtime_n, runtime_c) of the speed claim."""
    claims = [claim for group in groups for claim in group.evaluate(tables, settings)]
    correct_across(claims)
    mark_shared_tests(claims)
    return claims


def with_experiment(claims: list[Claim], experiment: str) -> list[Claim]:
    """``claims``, each with a design naming ``experiment`` as the one its units come from."""
    for claim in claims:
        if claim.design:
            claim.design = {"experiment": experiment, **claim.design}
    return claims


def correct_across(claims: list[Claim]) -> None:
    """Holm over both sides' p-values of every tested claim (the p that would make it hold and
    the p that would refute it): a claim keeps "holds" or "does not hold" only if that side's
    p survives, else it is inconclusive after the correction; exact claims (no p-value) keep
    their verdict. Beside it, ``fdr``: the same family at a false discovery rate of ALPHA
    (Benjamini-Yekutieli, valid under any dependence between the claims), a secondary reading
    that decides more claims at the price of a weaker guarantee."""
    tested = [c for c in claims if c.verdict != SKIPPED]
    sides = [(c, "p_value") for c in tested if c.p_value is not None]
    sides += [(c, "p_refute") for c in tested if c.p_refute is not None]
    raw = [getattr(c, name) for c, name in sides]
    adjusted = holm(raw)
    by = false_discovery_control(raw, method="by") if raw else []
    for (claim, name), p in zip(sides, adjusted):
        setattr(claim, f"{name}_across", float(p))
    discovered = {(id(c), name) for (c, name), q in zip(sides, by) if q < ALPHA}
    for claim in claims:
        claim.across = claim.fdr = claim.verdict
        if claim.verdict == HOLDS and claim.p_value is not None:
            claim.across = HOLDS if claim.p_value_across < ALPHA else UNSURE
            claim.fdr = HOLDS if (id(claim), "p_value") in discovered else UNSURE
        elif claim.verdict == FAILS and claim.p_refute is not None:
            claim.across = FAILS if claim.p_refute_across < ALPHA else UNSURE
            claim.fdr = FAILS if (id(claim), "p_refute") in discovered else UNSURE


def deciding_test(claim: Claim) -> float | None:
    """The raw p-value of the test that decides ``claim``'s verdict after the correction: its
    weakest cell where it holds (an intersection-union test), its strongest refuting test
    where it does not; None where no test decides it."""
    if claim.across == HOLDS:
        return claim.p_value
    if claim.across == FAILS:
        return min(claim.refute_tests) if claim.refute_tests else claim.p_refute
    return None


def mark_shared_tests(claims: list[Claim]) -> None:
    """Claims decided by the very same test (the same cells of the same runs and measure: the
    same raw p-value) are one piece of evidence: each after the first names the first
    (``same_test_as``), and the headline counts them once."""
    first: dict[tuple, str] = {}
    for claim in claims:
        p = deciding_test(claim)
        if p is None or not p > 0:  # a p of exactly 0 names no test uniquely
            continue
        key = (claim.across, float(f"{p:.12g}"))
        if key in first:
            claim.same_test_as = first[key]
        else:
            first[key] = claim.id


def _pair(before, after) -> str:
    return f"{format_p(before)} / {format_p(after)}" if before is not None else ""


def format_p(p_value: float | None) -> str:
    """A claim's p-value as the report states it (empty where it has none)."""
    return "" if p_value is None or np.isnan(p_value) else f"{p_value:.3g}"


def _p_cell(claim: Claim) -> str:
    """The summary's p-values (holds / refutes); a claim over cells with neither test says why."""
    if (claim.p_value, claim.p_refute) == (None, None):
        return f"no test: fewer than {MIN_UNITS} finished units" if claim.cells else ""
    return " / ".join(format_p(x) or "-" for x in (claim.p_value, claim.p_refute))


def _summary_table(claims: list[Claim]) -> list[str]:
    rows = [
        "| claim | verdict (after the correction over claims) | before the correction | "
        f"at FDR {ALPHA:.0%} (Benjamini-Yekutieli) | p (holds / refutes) | scope | units | effect |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in claims:
        verdict = f"{c.across} ({c.nature})" if c.nature else c.across
        verdict += " (threshold chosen after the data)" if c.post_hoc else ""
        verdict += f" (the same test as {c.same_test_as})" if c.same_test_as else ""
        rows.append(
            f"| {c.id} | {verdict} | {c.verdict} | {c.fdr} | {_p_cell(c)} | {c.scope} | "
            f"{c.units} | {c.effect} |"
        )
    return rows


def headline(claims: list[Claim]) -> str:
    """The verdict counts after the correction over claims, identities and tautologies apart,
    and the claims whose deciding constant was chosen after the data."""
    counted = [c for c in claims if not c.nature]
    counts = pd.Series([c.across for c in counted], dtype=object).value_counts().to_dict()
    once = [c for c in counted if c.same_test_as]
    repeats = pd.Series([c.across for c in once], dtype=object).value_counts().to_dict()

    def count(verdict, n):
        distinct = n - repeats.get(verdict, 0)
        return f"{verdict}: {n}" + (
            f" ({distinct} distinct deciding tests)" if distinct < n else ""
        )

    apart = [c for c in claims if c.nature]
    line = (
        f"Verdicts of the {len(counted)} claims about the paper's experiments, after the "
        "correction over claims: " + ", ".join(count(v, n) for v, n in counts.items())
    )
    if once:
        line += ". Decided by the same test as another claim (counted once): " + ", ".join(
            f"{c.id} (as {c.same_test_as})" for c in once
        )
    if apart:
        line += (
            f". Not counted: {len(apart)} identities or tautologies ("
            + ", ".join(f"{c.id}: {c.across}" for c in apart)
            + ")"
        )
    post_hoc = [c for c in counted if c.post_hoc]
    if post_hoc:
        line += ". Counted, with a threshold chosen after the data was seen: " + ", ".join(
            f"{c.id} ({c.across}; {c.post_hoc})" for c in post_hoc
        )
    return line + "."


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
    n_tested = sum(c.p_value is not None or c.p_refute is not None for c in claims)
    lines = [
        CLAIMS_TITLE,
        "",
        *_made_by(settings or {}),
        *_what_scale_decides(claims),
        headline(claims),
        "",
        DESIGN,
        "",
        f"One-sided paired t-tests at level {ALPHA} per cell; a claim over every cell holds "
        "where each cell holds (an intersection-union test: no correction over its cells), and "
        "is refuted where some cell is significantly worse (Holm over its cells). A cell needs "
        f"at least {MIN_UNITS} finished units; a method that diverged in more units than its "
        "rival cannot win a cell, and counts as worse only by a sign test on the units where "
        f'one side alone diverged. "Nearly all" means at least {NEARLY_ALL:.0%} of the cells '
        "hold (Holm over the cells) and none is significantly worse. A claim made of parts is "
        "refuted by Holm over the union of its parts' refuting tests. SAE and energy ratios are "
        "compared on the log scale: their estimand is the geometric mean (the ratio of "
        "geometric means between methods). Every verdict is stated after the correction over "
        f"claims: Holm once more over both sides' p-values of the {n_tested} claims with a "
        "test; the verdict before it stands beside, and so does the same family read at a "
        f"false discovery rate of {ALPHA:.0%} (Benjamini-Yekutieli; a secondary reading). "
        "Where a verdict is *inconclusive*, its section says how many units per cell would give "
        "the claim 80% power, or that none would. Every test is calibrated by simulation on "
        "both sides (tests/calibration/test_calibration.py, `make calibration`).",
        "",
        *_summary_table(claims),
        "",
    ]
    for c in claims:
        before = (
            f" (before the correction over claims: {c.verdict})" if c.across != c.verdict else ""
        )
        lines += [f"## {c.id}: **{c.across}**{before}", ""]
        if c.quote:
            lines += [f"> {c.quote}", ""]
        lines += [f"Checked as: {c.test}", ""] if c.test else []
        for label, text in (
            ("source", c.source),
            ("units", c.units),
            ("effect", c.effect),
            ("uncertainty", c.uncertainty),
            ("scope", c.scope),
            ("nature", c.nature and f"{c.nature}: kept out of the headline counts"),
            (
                "p-value that it holds (before / after the correction over claims)",
                _pair(c.p_value, c.p_value_across),
            ),
            (
                "p-value that it does not hold (before / after)",
                _pair(c.p_refute, c.p_refute_across),
            ),
            ("verdict before the correction over claims", c.verdict),
            (f"verdict at FDR {ALPHA:.0%} (Benjamini-Yekutieli, secondary)", c.fdr),
            ("threshold chosen after the data", c.post_hoc),
            ("decided by the same test as", c.same_test_as),
            ("thresholds", c.sensitivity),
            ("to settle it", c.needed),
            ("details", c.details),
        ):
            if text:
                lines.append(f"- {label}: {text}")
        lines.append("")
    lines += ["## Not checkable here", ""]
    lines += [f"- {what}: {why}." for what, why in NOT_CHECKABLE]
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text("\n".join(lines) + "\n")
    with atomic_path(json_path) as tmp:
        Path(tmp).write_text(json.dumps([asdict(c) for c in claims], indent=1))
