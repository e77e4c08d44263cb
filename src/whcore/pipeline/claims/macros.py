r"""A run's claims as TeX macros, so that a manuscript quotes its numbers from the run itself.

``write_macros(claims.json, claims.tex)`` writes one ``\newcommand`` per value the claims report
states, every value as the report formats it:

- per claim, ``\claim<Id><Field>``: ``Verdict`` (after the correction over all claims: the
  verdict the report leads with), ``VerdictBefore`` (before it), ``VerdictFdr`` (the same family
  at a false discovery rate of 5%, Benjamini-Yekutieli), ``Effect``, ``Uncertainty``, ``Units``, ``Scope``, ``Thresholds``, and the
  p-values of both sides before and after the correction: ``PValue``, ``PValueAcross``
  (holds), ``PRefute``, ``PRefuteAcross`` (does not hold) (the report's text); where the
  effect is one paired mean (``describe_effect``'s wording), also ``Mean``, the per-cell range
  ``Low`` and ``High`` (more than one cell) and the weakest cell's 95% CI ``WeakestLow`` and
  ``WeakestHigh``;
- the headline counts over the claims about the paper's experiments (identities and
  tautologies apart, ``\claimsApart``): ``\claimsTotal``, and per verdict ``\claimsHolds``,
  ``\claimsDoesNotHold``, ``\claimsInconclusive``, ``\claimsNotEvaluated``, after the
  correction over claims (and the same with ``Before`` appended: before it).

``<Id>`` is the claim's id in CamelCase: TeX names hold letters only, so every character other
than a letter or a digit separates words and is dropped, and every digit becomes its English
word (``spectrum_learns_degree4`` -> ``SpectrumLearnsDegreeFour``, ``10`` -> ``OneZero``).
Ids that give one name (``degree4`` and ``degree_four``) are refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...core.io import atomic_path
from ..runtime.guards import check_replaceable
from ..runtime.marks import MACROS_MARK
from .claim import effect_numbers
from .levels import FAILS, HOLDS, SKIPPED, UNSURE
from .report import format_p

__all__ = ["claims_macros", "macro_stem", "tex_text", "write_macros"]

DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
TEXT_FIELDS = {  # macro suffix -> the claims.json field it states
    "Verdict": "across",  # the verdict is the one after the correction over claims
    "VerdictBefore": "verdict",
    "VerdictFdr": "fdr",
    "Effect": "effect",
    "Uncertainty": "uncertainty",
    "Units": "units",
    "Scope": "scope",
    "Thresholds": "sensitivity",
}
P_VALUES = {
    "PValue": "p_value",
    "PValueAcross": "p_value_across",
    "PRefute": "p_refute",
    "PRefuteAcross": "p_refute_across",
}
NUMBERS = {
    "Mean": "mean",
    "Low": "low",
    "High": "high",
    "WeakestLow": "ci_low",
    "WeakestHigh": "ci_high",
}
VERDICTS = (HOLDS, FAILS, UNSURE, SKIPPED)
# Characters TeX treats specially (or typesets wrongly in its default encoding) in text.
TEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "±": r"\ensuremath{\pm}",
    "\n": " ",
}


def tex_text(text: str) -> str:
    """``text`` as TeX typesets it literally; a control character (a carriage return, a tab)
    is a space, since TeX would take it raw."""
    return "".join(TEX.get(char, " " if _control(char) else char) for char in text)


def _control(char: str) -> bool:
    return ord(char) < 32 or ord(char) == 127


def _camel(words: list[str]) -> str:
    return "".join(DIGITS[int(w)] if w.isdigit() else w[0].upper() + w[1:] for w in words)


def macro_stem(claim_id: str) -> str:
    r"""``\claim<Id>``'s name without the backslash and field: ``claim`` + the id in CamelCase."""
    words = re.findall(r"[A-Za-z]+|[0-9]", claim_id)
    if not words:
        raise ValueError(f"claim id {claim_id!r} has no letter or digit to name its TeX macros")
    return "claim" + _camel(words)


def _claim_values(claim: dict) -> dict[str, str]:
    """Field suffix -> TeX text of each value ``claim`` states."""
    values = {suffix: tex_text(claim.get(key) or "") for suffix, key in TEXT_FIELDS.items()}
    values |= {suffix: format_p(claim.get(key)) for suffix, key in P_VALUES.items()}
    numbers = effect_numbers(claim.get("effect") or "", claim.get("uncertainty") or "")
    values |= {suffix: numbers.get(key, "") for suffix, key in NUMBERS.items()}
    return {suffix: value for suffix, value in values.items() if value}


def _counts(claims: list[dict]) -> dict[str, str]:
    """The headline counts: the claims about the paper's experiments (identities and
    tautologies apart), and per verdict before and after the correction."""
    apart = [c for c in claims if c.get("nature")]
    claims = [c for c in claims if not c.get("nature")]
    counts = {"claimsTotal": str(len(claims)), "claimsApart": str(len(apart))}
    for verdict in VERDICTS:
        name = "claims" + _camel(verdict.split())
        counts[name] = str(sum(c.get("across") == verdict for c in claims))
        counts[name + "Before"] = str(sum(c["verdict"] == verdict for c in claims))
    return counts


def claims_macros(claims: list[dict]) -> dict[str, str]:
    """Macro name (no backslash) -> its TeX text, for the claims of a ``claims.json``."""
    macros: dict[str, str] = {}
    owners: dict[str, str] = {}  # macro name -> what it states

    def add(name: str, value: str, owner: str) -> None:
        if name in owners:
            raise ValueError(
                f"{owners[name]} and {owner} both give the TeX macro \\{name}: rename one "
                "(TeX names hold letters only: other characters are dropped, digits become words)"
            )
        owners[name], macros[name] = owner, value

    for claim in claims:
        stem = macro_stem(claim["id"])
        for suffix, value in _claim_values(claim).items():
            add(stem + suffix, value, f"claim {claim['id']!r}")
    for name, value in _counts(claims).items():
        add(name, value, "the headline counts")
    return macros


def _read_claims(path: Path) -> list[dict]:
    try:
        claims = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err}); give a run's claims.json") from None
    if not isinstance(claims, list) or not all(isinstance(c, dict) and "id" in c for c in claims):
        raise ValueError(
            f"{path}: not a list of the paper's claims (each with an id and a verdict); a run of "
            "your own data reports a comparison, which has no claim macros"
        )
    for index, claim in enumerate(claims):
        if problem := _claim_problem(claim):
            raise ValueError(
                f"{path}: claim {index + 1} ({str(claim['id'])[:60]!r}): {problem}; give a run's "
                "claims.json as `whcore claims` wrote it"
            )
    return claims


def _claim_problem(claim: dict) -> str | None:
    """What makes ``claim`` no claim of a claims.json (None: nothing)."""
    if not isinstance(claim["id"], str):
        return "its id is not text"
    if claim.get("verdict") not in VERDICTS:
        return f"its verdict {claim.get('verdict')!r:.40} is none of {', '.join(VERDICTS)}"
    for key in P_VALUES.values():
        value = claim.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            return f"its {key} {value!r:.40} is not a number"
    for key in TEXT_FIELDS.values():
        if not isinstance(claim.get(key) or "", str):
            return f"its {key} is not text"
    return None


def write_macros(claims_json: str | Path, tex: str | Path) -> Path:
    """Write the TeX macros of ``claims_json`` (a run's ``claims.json``) to ``tex``, which may
    replace only a macros file of this project (``check_replaceable``): never a manuscript."""
    claims_json, tex = Path(claims_json), Path(tex)
    check_replaceable(
        tex,
        fix="write the macros to a file of their own (claims.tex) and \\input it",
        kind="macros",
    )
    macros = claims_macros(_read_claims(claims_json))
    lines = [
        f"% The claims of {claims_json.name} as TeX macros {MACROS_MARK}: \\claim<Id><Field>,",
        "% each value as the claims report states it; \\claimsTotal and the verdict counts.",
        "% Generated: `whcore macros` rewrites this file, and refuses it once lines are added;",
        "% keep your own macros in a file of your own.",
        *(f"\\newcommand{{\\{name}}}{{{value}}}" for name, value in macros.items()),
    ]
    with atomic_path(tex) as tmp:
        Path(tmp).write_text("\n".join(lines) + "\n")
    return tex
