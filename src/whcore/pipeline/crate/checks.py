"""The checks of a run's crate (``whcore bundle``): what ro-crate-py's model may let pass
(``check_crate``: every file the metadata names is in the zip) and roc-validator's verdict at the
Provenance Run Crate profile, offline (``validate_crate``)."""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

from .open import METADATA, facts_differ, stream_facts

__all__ = ["PROFILE", "VERSION", "check_crate", "validate_crate"]

PROFILE = "provenance-run-crate-0.5"  # roc-validator's id of the profile the crate follows
VERSION = "1.1"  # the RO-Crate version those profiles build on
CONTEXT = f"https://w3id.org/ro/crate/{VERSION}/context"
# The terms whose IRIs RO-Crate 1.3's context changed, as 1.1's context (and the profiles'
# shapes) have them: the offline copy of the 1.1 context is ro-crate-py's 1.3 context with these.
CONTEXT_1_1_TERMS = {
    "ComputationalWorkflow": "https://bioschemas.org/ComputationalWorkflow",
    "FormalParameter": "https://bioschemas.org/FormalParameter",
    "input": "https://bioschemas.org/ComputationalWorkflow#input",
    "output": "https://bioschemas.org/ComputationalWorkflow#output",
}


def _metadata(crate: str | Path) -> dict:
    with zipfile.ZipFile(crate) as archive:
        return json.loads(archive.read("ro-crate-metadata.json"))


def _member_facts(archive: zipfile.ZipFile, name: str) -> dict:
    with archive.open(name) as handle:
        return stream_facts(handle)


def check_crate(crate: str | Path) -> list[str]:
    """What the validator may let pass: every file an action or the root names is in the zip,
    every action's outputs included, with the sha256 and size the metadata gives it. Returns the
    problems (none: an empty list)."""
    graph = {entity["@id"]: entity for entity in _metadata(crate)["@graph"]}
    with zipfile.ZipFile(crate) as archive:
        names = set(archive.namelist())
        problems = [
            f"{name} {problem}"
            for name in sorted((names & set(graph)) - {METADATA})
            if (problem := facts_differ(graph[name], _member_facts(archive, name)))
        ]

    def refs(value):
        values = value if isinstance(value, list) else [value]
        return [v["@id"] for v in values if isinstance(v, dict) and "@id" in v]

    for entity in graph.values():
        types = entity.get("@type", [])
        types = types if isinstance(types, list) else [types]
        if "File" in types and not entity["@id"].startswith(("#", "http:", "https:")):
            if entity["@id"] not in names:
                problems.append(f"{entity['@id']} is described but not in the zip")
        if "CreateAction" in types:
            for ref in refs(entity.get("result", [])) + refs(entity.get("object", [])):
                if ref not in graph and not ref.startswith(("http:", "https:")):
                    problems.append(f"{entity['@id']} names {ref}, which the crate lacks")
                elif ref in graph and not ref.startswith(("#", "http:", "https:")):
                    if ref not in names:
                        problems.append(f"{entity['@id']} names {ref}, missing from the zip")
    return sorted(set(problems))


def _offline_cache(folder: Path) -> Path:
    """An HTTP cache for roc-validator holding the RO-Crate 1.1 JSON-LD context (so that the
    validation needs no network): ro-crate-py's bundled context with 1.1's IRIs."""
    import io

    import requests
    import rocrate
    import urllib3
    from requests_cache import CachedSession

    document = json.loads(
        (Path(rocrate.__file__).with_name("data") / "ro-crate.jsonld").read_text()
    )
    document["@id"] = CONTEXT
    document["@context"].update(CONTEXT_1_1_TERMS)
    body = json.dumps(document).encode()
    name = folder / "http-cache"
    session = CachedSession(cache_name=str(name), backend="sqlite", expire_after=-1)
    headers = {"Content-Type": "application/ld+json"}
    for accept in (
        "application/ld+json, application/json",
        "application/ld+json, application/json, */*;q=0.1",
        "application/ld+json",
    ):
        response = requests.Response()
        response.status_code, response._content, response.url = 200, body, CONTEXT
        response.headers.update(headers)
        response.encoding = "utf-8"
        response.raw = urllib3.HTTPResponse(
            body=io.BytesIO(body),
            status=200,
            headers=headers,
            request_url=CONTEXT,
            preload_content=False,
        )
        response.request = session.prepare_request(
            requests.Request("GET", CONTEXT, headers={"Accept": accept})
        )
        session.cache.save_response(response)
    session.close()
    return name


def validate_crate(crate: str | Path, profile: str = PROFILE) -> list[str]:
    """roc-validator's verdict on ``crate`` at ``profile``, offline: the failed requirements of
    severity REQUIRED, one line each; none when it passes."""
    from rocrate_validator import models, services

    with tempfile.TemporaryDirectory() as tmp:
        settings = models.ValidationSettings(
            rocrate_uri=str(Path(crate).resolve()),
            profile_identifier=profile,
            requirement_severity=models.Severity.REQUIRED,
            offline=True,
            cache_path=_offline_cache(Path(tmp)),
        )
        result = services.validate(settings)
    if result.passed():
        return []
    return sorted(
        {
            f"{issue.check.identifier}: {issue.message}"
            + (f" ({issue.violatingEntity})" if getattr(issue, "violatingEntity", None) else "")
            for issue in result.get_issues()
        }
    )
