"""A finished run as one citable bundle: a Workflow Run RO-Crate, and the figures and claims
redrawn from it alone.

``bundle(results/<run>)`` writes ``results/<run>/<run>.crate.zip``: the run's tables, claims
(``claims.md``, ``claims.json``), figures, provenance and configuration, the plan (every job's
canonical spec, ``jobs.json``), the workflow's code, the software it ran with and the commit,
described by the Provenance Run Crate profile: the workflow run as a CreateAction, Snakemake's
as an OrganizeAction, each job as a CreateAction of its ``whcore`` subcommand with its spec as a
parameter, its inputs and outputs (start and end times from Snakemake's records where the run
folder keeps them), each linked to its step by a ControlAction.

``render(crate, out)`` rebuilds every figure and the claims report from the crate alone: it runs
the crate's figure and claims jobs (the same ``whcore`` subcommands the workflow ran) on the
crate's tables. Neither the raw data, nor the run records, nor Snakemake are needed.

Paths inside the crate are those under ``results/<run>/``; the specs keep the run's own paths.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import time
import zipfile
from importlib import metadata
from pathlib import Path

from .layout import Layout
from .provenance import git_commit
from .runrecord import RECORD, config_digest
from .schema import SCHEMA_PATH

__all__ = [
    "PROFILE",
    "bundle",
    "check_crate",
    "crate_path",
    "render",
    "validate_crate",
]

PROFILE = "provenance-run-crate-0.5"  # roc-validator's id of the profile the crate follows
PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/ro/wfrun/provenance/0.5": "Provenance Run Crate",
}
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
JOBS = "jobs.json"  # in the crate: every job of the plan (kind, spec, inputs, outputs)
CONFIG = "config.yaml"  # in the crate: the configuration file the run was made by
INSTALLED = "environment/installed.txt"  # the installed distributions, name==version
LOCK = "envs/linux-cpu.lock"  # the tested set of the checkout (a path of the checkout)
CHECKOUT = SCHEMA_PATH.parents[2]
WORKFLOW_FILES = ("Snakefile", "workflow/rules", "workflow/schemas")
RENDERED = ("figure", "epistasis_figure", "claims")  # the jobs `render` reruns


def crate_path(root: str | Path) -> Path:
    """``results/<run>/<run>.crate.zip``."""
    root = Path(root)
    return root / f"{root.name}.crate.zip"


# --- bundle ---------------------------------------------------------------------------------------


def _load(root: Path, configfile: str | None, schema: str):
    """The run's contract, from ``configfile`` or the configuration the run recorded, checked
    against the digest the run recorded."""
    from .contract import load_contract

    record_path = root / RECORD
    if not record_path.is_file():
        raise ValueError(
            f"{record_path}: no such file; {root} is not a run folder (results/<run> of a run "
            "Snakemake made)"
        )
    record = json.loads(record_path.read_text())
    source = configfile or record["source"]
    workdir = root.parent.parent
    path = Path(source) if Path(source).is_absolute() else workdir / source
    if not path.is_file():
        raise ValueError(
            f"{record_path}: the run's configuration {source} is not there; pass it with "
            "--configfile"
        )
    contract = load_contract(str(path), schema)
    if contract.layout.root != f"{Layout.RESULTS}/{root.name}":
        raise ValueError(
            f"{path}: run_name {contract.config['run_name']!r} is not the run {root.name!r}"
        )
    if config_digest(contract.config) != record["digest"]:
        raise ValueError(
            f"{path}: not the configuration that made {root} (its digest differs from "
            f"{record_path}'s); pass the run's own with --configfile"
        )
    return contract, path


def _snakemake_times(workdir: Path) -> dict[str, tuple[float, float]]:
    """Output path -> (start, end) from Snakemake's records under ``workdir``/.snakemake."""
    folder = workdir / ".snakemake" / "metadata"
    times = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            file = Path(dirpath) / name
            encoded = "".join(file.relative_to(folder).parts)  # long ids are split in folders
            try:
                path = base64.urlsafe_b64decode(encoded).decode()
                record = json.loads(file.read_text())
            except (ValueError, OSError):
                continue
            if record.get("starttime") and record.get("endtime"):
                times[path] = (record["starttime"], record["endtime"])
    return times


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(seconds))


def _installed() -> str:
    names = {
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in metadata.distributions()
        if dist.metadata["Name"]
    }
    return "\n".join(sorted(names, key=str.lower)) + "\n"


def bundle(
    root: str | Path,
    configfile: str | None = None,
    schema: str | Path = SCHEMA_PATH,
    out: str | Path | None = None,
    validate: bool = True,
) -> Path:
    """Write the crate of the finished run ``root`` (results/<run>); returns its path."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    root = Path(root).resolve()
    contract, config_path = _load(root, configfile, str(schema))
    run_prefix = f"{contract.layout.root}/"
    workdir = root.parent.parent
    targets = contract.targets()
    missing = [path for path in targets if not (workdir / path).is_file()]
    if missing:
        raise ValueError(
            f"{root}: the run is not finished ({len(missing)} output(s) missing, e.g. "
            f"{missing[0]}); finish it with snakemake first"
        )
    commit = git_commit(CHECKOUT)
    times = _snakemake_times(workdir)
    crate = ROCrate(version=VERSION)
    crate.name = f"whcore run {root.name}"
    crate.description = (
        f"The run {root.name} of the HashWH reproduction (configuration {config_path.name}): "
        "its tables, claims, figures, every job's spec and what produced them."
    )
    crate.license = "https://spdx.org/licenses/MIT"
    crate.root_dataset["datePublished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    for uri, name in PROFILES.items():
        profile = crate.add(
            ContextEntity(
                crate,
                uri,
                properties={"@type": "CreativeWork", "name": name, "version": uri[-3:]},
            )
        )
        crate.root_dataset.append_to("conformsTo", profile)

    # the workflow and its code
    workflow = crate.add_workflow(
        CHECKOUT / "Snakefile",
        "Snakefile",
        main=True,
        lang="snakemake",
        properties={
            # HowTo: it links to its steps
            "@type": ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"],
            "name": "whcore workflow",
            "version": commit,
        },
    )
    for folder in WORKFLOW_FILES[1:]:
        for file in sorted((CHECKOUT / folder).iterdir()):
            if file.is_file():
                crate.add_file(file, f"{folder}/{file.name}")
    engine = crate.add(
        ContextEntity(
            crate,
            "#snakemake",
            properties={
                "@type": "SoftwareApplication",
                "name": "Snakemake",
                "url": "https://snakemake.readthedocs.io",
                "softwareVersion": _version("snakemake"),
            },
        )
    )
    whcore_app = _version("whcore")

    # what the run read and wrote, and the files beside them
    files: dict[str, object] = {}  # run path -> its entity
    config_file = crate.add_file(
        config_path,
        CONFIG,
        properties={"name": "configuration", "encodingFormat": "application/yaml"},
    )
    for path in [*targets, f"{run_prefix}{RECORD}"]:
        files[path] = crate.add_file(workdir / path, path.removeprefix(run_prefix))
    plan = [
        {
            "id": job_id,
            "kind": job.kind,
            "subcommand": _subcommand(job.kind),
            "spec": json.loads(job.spec_json),
            "inputs": list(job.inputs),
            "command_inputs": contract.command_inputs(job),
            "outputs": contract.written_by(job),
        }
        for job_id, job in sorted(contract.jobs.items())
    ]
    with tempfile.TemporaryDirectory() as tmp:
        extra = Path(tmp)
        (extra / JOBS).write_text(json.dumps(plan, indent=1, sort_keys=True) + "\n")
        crate.add_file(
            extra / JOBS,
            JOBS,
            properties={
                "name": "every job's canonical spec",
                "encodingFormat": "application/json",
            },
        )
        (extra / "installed.txt").write_text(_installed())
        crate.add_file(
            extra / "installed.txt",
            INSTALLED,
            properties={"name": "installed distributions (bundling environment)"},
        )
        if (CHECKOUT / LOCK).is_file():
            crate.add_file(CHECKOUT / LOCK, LOCK, properties={"name": "the tested set (lock)"})

        # the actions: one per job, its step, and the run of the whole workflow
        control = []
        spec_params = {}
        for entry in plan:
            kind = entry["kind"]
            if kind not in spec_params:
                spec_params[kind] = _step(crate, workflow, kind, whcore_app)
            step, tool, parameter = spec_params[kind]
            inputs = [_entity(crate, files, path, run_prefix) for path in entry["inputs"]]
            outputs = [_entity(crate, files, path, run_prefix) for path in entry["outputs"]]
            value = crate.add(
                ContextEntity(
                    crate,
                    f"#spec/{entry['id']}",
                    properties={
                        "@type": "PropertyValue",
                        "name": "spec",
                        "value": json.dumps(entry["spec"], sort_keys=True),
                        "exampleOfWork": {"@id": parameter.id},
                    },
                )
            )
            properties = {"@type": "CreateAction", "name": f"{entry['subcommand']} {entry['id']}"}
            span = next((times[p] for p in entry["outputs"] if p in times), None)
            if span:
                properties["startTime"], properties["endTime"] = _iso(span[0]), _iso(span[1])
            action = crate.add_action(
                tool,
                identifier=f"#job/{entry['id']}",
                object=[value, *inputs],
                result=outputs,
                properties=properties,
            )
            control.append(
                crate.add_action(
                    step,
                    identifier=f"#control/{entry['id']}",
                    object=action,
                    properties={"@type": "ControlAction", "name": f"orchestrate {entry['id']}"},
                )
            )
        final = [files[path] for path in targets]
        run_action = crate.add_action(
            workflow,
            identifier="#run",
            object=[config_file],
            result=final,
            properties={"@type": "CreateAction", "name": f"run {root.name} of the workflow"},
        )
        spans = [times[p] for entry in plan for p in entry["outputs"] if p in times]
        if spans:  # from the first job's start to the last one's end
            run_action["startTime"] = _iso(min(s for s, _ in spans))
            run_action["endTime"] = _iso(max(e for _, e in spans))
        crate.add_action(
            engine,
            identifier="#orchestrate",
            object=control,
            result=run_action,
            properties={"@type": "OrganizeAction", "name": f"Snakemake runs {root.name}"},
        )
        crate.root_dataset["mentions"] = run_action
        destination = Path(out).resolve() if out else crate_path(root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        # written beside its destination under its own name (the validator reads *.zip), checked,
        # then renamed: a crate that fails a check never appears under the final name
        with tempfile.TemporaryDirectory(prefix=".bundle-", dir=destination.parent) as part:
            written = Path(part) / destination.name
            crate.write_zip(written)
            problems = check_crate(written)
            if validate and not problems:
                problems = validate_crate(written)
            if problems:
                raise RuntimeError(f"{destination}: not a valid crate: " + "; ".join(problems))
            os.replace(written, destination)
    return destination


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def _subcommand(kind: str) -> str:
    from .contract import SUBCOMMANDS

    return SUBCOMMANDS[kind]


def _step(crate, workflow, kind: str, version: str):
    """The workflow's step of job kind ``kind``, its tool (``whcore <subcommand>``) and the
    tool's spec parameter."""
    from rocrate.model.contextentity import ContextEntity

    subcommand = _subcommand(kind)
    parameter = crate.add_formal_parameter(
        "spec",
        "Text",
        identifier=f"#param/{kind}/spec",
        description=f"the canonical spec of a {kind} job (JSON)",
        valueRequired=True,
    )
    tool = crate.add(
        ContextEntity(
            crate,
            f"#tool/{kind}",
            properties={
                "@type": "SoftwareApplication",
                "name": f"whcore {subcommand}",
                "softwareVersion": version,
                "input": [{"@id": parameter.id}],
            },
        )
    )
    step = crate.add(
        ContextEntity(
            crate,
            f"#step/{kind}",
            properties={
                "@type": "HowToStep",
                "name": f"{kind} jobs",
                "workExample": {"@id": tool.id},
            },
        )
    )
    workflow.append_to("step", step)
    workflow.append_to("hasPart", tool)
    return step, tool, parameter


def _entity(crate, files: dict, path: str, run_prefix: str):
    """The crate's entity of a run path: its file where the crate holds it, else a contextual
    entity naming the path (run records, raw and binarized data stay out of the crate)."""
    from rocrate.model.contextentity import ContextEntity

    if path in files:
        return files[path]
    identifier = f"#path/{path}"
    if crate.get(identifier) is None:
        files[path] = crate.add(
            ContextEntity(
                crate,
                identifier,
                properties={
                    "@type": "CreativeWork",
                    "name": path,
                    "description": "not in the crate (run records and data stay with the run)",
                },
            )
        )
    else:
        files[path] = crate.get(identifier)
    return files[path]


# --- checks ---------------------------------------------------------------------------------------


def _metadata(crate: str | Path) -> dict:
    with zipfile.ZipFile(crate) as archive:
        return json.loads(archive.read("ro-crate-metadata.json"))


def check_crate(crate: str | Path) -> list[str]:
    """What the validator may let pass: every file an action or the root names is in the zip,
    every action's outputs included. Returns the problems (none: an empty list)."""
    with zipfile.ZipFile(crate) as archive:
        names = set(archive.namelist())
    graph = {entity["@id"]: entity for entity in _metadata(crate)["@graph"]}
    problems = []

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
            body=io.BytesIO(body), status=200, headers=headers, request_url=CONTEXT,
            preload_content=False,
        )  # fmt: skip
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


# --- render ---------------------------------------------------------------------------------------


def render(crate: str | Path, out: str | Path, log=print) -> list[Path]:
    """Rebuild every figure and the claims report of ``crate`` under ``out`` (claims.md,
    claims.json, provenance.tsv and figures/ as in the run folder); returns what it wrote."""
    from .cli import build_parser

    out = Path(out).resolve()
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(crate) as archive:
            archive.extractall(tmp)
        plan = json.loads((Path(tmp) / JOBS).read_text())
        record = json.loads((Path(tmp) / RECORD).read_text())
        prefix = f"{Layout.RESULTS}/{record['run_name']}/"
        for entry in plan:
            if entry["kind"] not in RENDERED:
                continue
            spec = entry["spec"]
            spec["outputs"] = {
                role: str(out / path.removeprefix(prefix)) for role, path in spec["outputs"].items()
            }
            for path in spec["outputs"].values():
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            args = [entry["subcommand"], "--spec", json.dumps(spec)]
            for option, paths in entry["command_inputs"].items():
                args += [option, *(str(Path(tmp) / p.removeprefix(prefix)) for p in paths)]
            parsed = build_parser().parse_args(args)
            parsed.func(parsed)
            written += [out / p.removeprefix(prefix) for p in entry["outputs"]]
            log(f"rendered {entry['id']}")
    return written
