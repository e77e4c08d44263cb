"""A run's claims as TeX macros (`whcore macros`, `whcore render --tex`): names that TeX accepts
and that never collide, values as the claims report states them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from whcore.pipeline.claims.claim import describe_effect, effect_numbers
from whcore.pipeline.claims.macros import claims_macros, macro_stem, tex_text, write_macros
from whcore.pipeline.claims.report import format_p

LINE = re.compile(r"\\newcommand\{\\([A-Za-z]+)\}\{(.*)\}")
# The escapes of tex_text, undone (written out here, not taken from the module under test).
UNTEX = [
    (r"\textbackslash{}", "\\"),
    (r"\textasciicircum{}", "^"),
    (r"\textasciitilde{}", "~"),
    (r"\textless{}", "<"),
    (r"\textgreater{}", ">"),
    (r"\textbar{}", "|"),
    (r"\ensuremath{\pm}", "±"),
    *((f"\\{c}", c) for c in "{}$&#%_"),
]


def parse_macros(text: str) -> dict[str, str]:
    """Name -> value of a macros file; fails unless every line but the comments is one
    \\newcommand with a letters-only name and a value of balanced braces, each name once."""
    macros = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("%"):
            continue
        found = LINE.fullmatch(line)
        assert found, f"line {number} is not a \\newcommand: {line!r}"
        name, value = found.groups()
        assert name not in macros, f"line {number}: \\{name} defined twice"
        depth = 0
        for brace in re.sub(r"\\[{}]", "", value):
            depth += {"{": 1, "}": -1}.get(brace, 0)
            assert depth >= 0, f"line {number}: unbalanced braces in {value!r}"
        assert depth == 0, f"line {number}: unbalanced braces in {value!r}"
        macros[name] = value
    return macros


def untex(value: str) -> str:
    for escaped, char in UNTEX:
        value = value.replace(escaped, char)
    return value


def check_macros(claims: list[dict], macros: dict[str, str]) -> None:
    """Each claim's macros state its claims.json values, the numbers as the effect writes them."""
    for claim in claims:
        stem = macro_stem(claim["id"])
        assert macros[stem + "Verdict"] == claim["across"]  # after the correction over claims
        assert macros[stem + "VerdictBefore"] == claim["verdict"]
        assert stem + "Across" not in macros  # one name per verdict
        assert untex(macros.get(stem + "Effect", "")) == claim["effect"], claim["id"]
        assert untex(macros.get(stem + "Units", "")) == claim["units"], claim["id"]
        for suffix, key in (
            ("PValue", "p_value"),
            ("PRefute", "p_refute"),
            ("PRefuteAcross", "p_refute_across"),
        ):
            assert macros.get(stem + suffix, "") == format_p(claim.get(key)), (claim["id"], key)
        if stem + "Mean" in macros:
            assert f"{float(macros[stem + 'Mean']):+.4f}" == macros[stem + "Mean"]
            assert f" {macros[stem + 'Mean']}" in claim["effect"], claim["id"]
    stated = [c for c in claims if c["effect"].startswith("mean paired difference in")]
    assert sum(macro_stem(c["id"]) + "Mean" in macros for c in stated) == len(stated)
    counted = [c for c in claims if not c.get("nature")]  # identities and tautologies apart
    assert macros["claimsTotal"] == str(len(counted))
    assert macros["claimsApart"] == str(len(claims) - len(counted))
    assert macros["claimsHolds"] == str(sum(c["across"] == "holds" for c in counted))
    assert macros["claimsHoldsBefore"] == str(sum(c["verdict"] == "holds" for c in counted))


def test_digits_become_words_and_other_characters_separate_words():
    assert macro_stem("synthetic_hashwh_beats_standard") == "claimSyntheticHashwhBeatsStandard"
    assert macro_stem("spectrum_learns_degree4") == "claimSpectrumLearnsDegreeFour"
    assert macro_stem("gb1-train 10") == "claimGbOneTrainOneZero"


def test_ids_that_give_one_macro_name_are_refused():
    claims = [{"id": i, "verdict": "holds", "across": "holds"} for i in ("degree4", "degree_four")]
    with pytest.raises(ValueError, match=r"'degree4' and claim 'degree_four'.*claimDegreeFour"):
        claims_macros(claims)
    with pytest.raises(ValueError, match="no letter or digit"):
        macro_stem("__")


def test_tex_text_typesets_literally():
    assert tex_text("95% of R^2_x ± {a} & |b| > c") == (
        r"95\% of R\textasciicircum{}2\_x \ensuremath{\pm} \{a\} \& \textbar{}b\textbar{} "
        r"\textgreater{} c"
    )


def test_effect_numbers_read_what_describe_effect_wrote():
    rng = np.random.default_rng(7)
    for cells in (1, 4):
        frame = pd.DataFrame(
            {"mean": rng.normal(0, 2, cells), "sem": rng.uniform(0.01, 1, cells), "units": 5}
        )
        effect, uncertainty, _ = describe_effect(frame, "test R^2 (HashWH - standard)")
        numbers = effect_numbers(effect, uncertainty)
        assert float(numbers["mean"]) == pytest.approx(frame["mean"].mean(), abs=1e-4)
        assert set(numbers) == (
            {"mean", "ci_low", "ci_high"} | ({"low", "high"} if cells > 1 else set())
        )
        weakest = frame.loc[frame["mean"].idxmin()]
        half = stats.t.ppf(0.975, 4) * weakest["sem"]
        assert float(numbers["ci_low"]) == pytest.approx(weakest["mean"] - half, abs=1e-4)
        assert float(numbers["ci_high"]) == pytest.approx(weakest["mean"] + half, abs=1e-4)
        if cells > 1:
            assert float(numbers["low"]) == pytest.approx(frame["mean"].min(), abs=1e-4)
            assert float(numbers["high"]) == pytest.approx(frame["mean"].max(), abs=1e-4)
    assert effect_numbers("k = 10: 2^b E[C] = 89.6", "3 standard errors") == {}


def test_a_comparison_of_users_data_has_no_macros(tmp_path):
    (tmp_path / "claims.json").write_text(json.dumps({"cells": [], "differences": []}))
    with pytest.raises(ValueError, match="claims.json: not a list of the paper's claims"):
        write_macros(tmp_path / "claims.json", tmp_path / "claims.tex")
    assert not (tmp_path / "claims.tex").exists()


def test_the_faithful_claims_macros_state_the_faithful_claims():
    """docs/faithful/claims.tex is what `whcore macros` writes from docs/faithful/claims.json."""
    from conftest import REPO

    faithful = REPO / "docs" / "faithful"
    claims = json.loads((faithful / "claims.json").read_text())
    check_macros(claims, parse_macros((faithful / "claims.tex").read_text()))


# --- from a crate, and beside it --------------------------------------------------------------


def claims_crate(path, claims: bytes, described: bytes | None = None):
    """A crate holding only ``claims`` as claims.json, its metadata describing ``described``
    (default: the same bytes) by sha256 and size, as `whcore bundle` describes its members."""
    import io
    import zipfile

    from whcore.pipeline.crate.open import METADATA, stream_facts

    facts = stream_facts(io.BytesIO(claims if described is None else described))
    graph = [{"@id": "./", "name": "whcore run tiny"}, {"@id": "claims.json", **facts}]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(METADATA, json.dumps({"@graph": graph}))
        archive.writestr("claims.json", claims)
    return path


def test_macros_read_a_crates_checked_claims_without_rendering(tmp_path, capsys):
    from conftest import REPO

    from whcore.command import main

    faithful = REPO / "docs" / "faithful"
    crate = claims_crate(tmp_path / "run.crate.zip", (faithful / "claims.json").read_bytes())
    assert main(["macros", str(crate), str(tmp_path / "claims.tex")]) == 0
    assert (tmp_path / "claims.tex").read_text() == (faithful / "claims.tex").read_text()
    edited = claims_crate(tmp_path / "edited.crate.zip", b"[]", described=b"[ ]")
    assert main(["macros", str(edited), str(tmp_path / "edited.tex")]) == 2
    assert "claims.json differs from its sha256" in capsys.readouterr().err
    assert not (tmp_path / "edited.tex").exists()


def test_render_writes_beside_the_crate_and_its_tex_from_what_it_rendered(tmp_path, monkeypatch):
    """With no --out, `render` writes <run>-rendered beside the crate, not into the folder it
    runs from (a checkout); a bare --tex writes <out>/claims.tex from the claims.json it just
    rendered, rendering once."""
    from conftest import REPO

    from whcore.command import main
    from whcore.pipeline.crate import render as crate_render

    renders = []

    def render(crate, out, log, notice=print):  # what --tex reads; the rest is test_bundle's
        renders.append(Path(out))
        Path(out).mkdir(parents=True)
        (Path(out) / "claims.json").write_bytes((REPO / "docs/faithful/claims.json").read_bytes())
        return [Path(out) / "claims.json"]

    monkeypatch.setattr(crate_render, "render", render)
    (tmp_path / "runs").mkdir()
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert main(["render", "../runs/quick.crate.zip", "--tex"]) == 0
    assert renders == [Path("../runs/quick-rendered")]
    assert (tmp_path / "runs/quick-rendered/claims.tex").read_text() == (
        REPO / "docs/faithful/claims.tex"
    ).read_text()
    assert not list((tmp_path / "here").iterdir())


@pytest.mark.parametrize(
    "change, says",
    [
        ({"p_value": "0.01"}, "its p_value '0.01' is not a number"),
        ({"id": 7}, "its id is not text"),
        ({"verdict": None}, "its verdict None is none of holds"),
        ({"effect": ["a"]}, "its effect is not text"),
    ],
)
def test_a_claims_json_edited_by_hand_is_one_line(tmp_path, change, says):
    """A text p-value, a numeric id, no verdict: one line naming the claim, not a traceback."""
    from conftest import REPO

    claims = json.loads((REPO / "docs" / "faithful" / "claims.json").read_text())
    claims[1].update(change)
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    with pytest.raises(ValueError, match=f"claims.json: claim 2 .*: {re.escape(says)}") as err:
        write_macros(tmp_path / "claims.json", tmp_path / "claims.tex")
    assert "\n" not in str(err.value) and not (tmp_path / "claims.tex").exists()


def test_a_control_character_in_claim_text_is_a_space_in_tex():
    assert tex_text("holds\r\n\tat\x0bn = 50\x7f") == "holds   at n = 50 "


def test_macros_refuse_a_file_the_user_added_lines_to(tmp_path):
    """Regenerating would drop the user's lines: the file is refused once edited, kept whole."""
    from conftest import REPO

    claims, tex = REPO / "docs" / "faithful" / "claims.json", tmp_path / "claims.tex"
    write_macros(claims, tex)
    assert "keep your own macros in a file of your own" in tex.read_text().splitlines()[3]
    write_macros(claims, tex)  # its own file: rewritten
    edited = tex.read_text() + "\\newcommand{\\myEffect}{0.3}\n"
    tex.write_text(edited)
    with pytest.raises(FileExistsError, match="claims.tex: an existing file that no whcore"):
        write_macros(claims, tex)
    assert tex.read_text() == edited
