"""The actions of a run's crate (``whcore bundle``), as the Provenance Run Crate profile has
them: each job a CreateAction of its ``whcore`` subcommand (its step's tool) with its spec as a
parameter, its inputs and outputs, linked to its step by a ControlAction; the run of the
workflow a CreateAction, Snakemake's orchestration an OrganizeAction. Start and end times come
from Snakemake's records where the run folder keeps them."""

from __future__ import annotations

import json
import time
from importlib import metadata
from pathlib import Path

from ..runtime.job_records import job_records

__all__ = ["add_jobs", "add_run", "snakemake_times"]


def snakemake_times(workdir: Path) -> dict[str, tuple[float, float]]:
    """Output path -> (start, end) from Snakemake's records under ``workdir``/.snakemake."""
    return {
        path: (record["starttime"], record["endtime"])
        for path, record in job_records(workdir)
        if record.get("starttime") and record.get("endtime")
    }


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(seconds))


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def add_jobs(crate, workflow, plan, files: dict, prefix: str, times: dict) -> list:
    """Each job as a CreateAction of its step's tool, and the ControlActions that link them."""
    steps, control, version = {}, [], _version("whcore")
    for entry in plan:
        kind = entry["kind"]
        if kind not in steps:
            steps[kind] = _step(crate, workflow, kind, entry["subcommand"], version)
        step, tool, parameter = steps[kind]
        action = _add_job(crate, tool, parameter, entry, files, prefix, times)
        control.append(
            crate.add_action(
                step,
                identifier=f"#control/{entry['id']}",
                object=action,
                properties={"@type": "ControlAction", "name": f"orchestrate {entry['id']}"},
            )
        )
    return control


def _add_job(crate, tool, parameter, entry: dict, files: dict, prefix: str, times: dict):
    """The job ``entry`` as a CreateAction of ``tool``: its spec (a value of ``parameter``) and
    inputs, its outputs, its start and end where Snakemake recorded them."""
    from rocrate.model.contextentity import ContextEntity

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
    inputs = [_entity(crate, files, path, prefix) for path in entry["inputs"]]
    outputs = [_entity(crate, files, path, prefix) for path in entry["outputs"]]
    properties = {"@type": "CreateAction", "name": f"{entry['subcommand']} {entry['id']}"}
    span = next((times[p] for p in entry["outputs"] if p in times), None)
    if span:
        properties["startTime"], properties["endTime"] = _iso(span[0]), _iso(span[1])
    return crate.add_action(
        tool,
        identifier=f"#job/{entry['id']}",
        object=[value, *inputs],
        result=outputs,
        properties=properties,
    )


def _step(crate, workflow, kind: str, subcommand: str, version: str):
    """The workflow's step of job kind ``kind``, its tool (``whcore <subcommand>``) and the
    tool's spec parameter."""
    from rocrate.model.contextentity import ContextEntity

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


def add_run(crate, workflow, config_file, results: list, control: list, spans: list, name: str):
    """The run ``name`` of ``workflow`` (its configuration ``config_file``, its ``results``) as a
    CreateAction spanning ``spans`` (each job's start and end), orchestrated by Snakemake through
    the ControlActions ``control``; the crate's root mentions it."""
    run = crate.add_action(
        workflow,
        identifier="#run",
        object=[config_file],
        result=results,
        properties={"@type": "CreateAction", "name": f"run {name} of the workflow"},
    )
    if spans:  # from the first job's start to the last one's end
        run["startTime"] = _iso(min(s for s, _ in spans))
        run["endTime"] = _iso(max(e for _, e in spans))
    crate.add_action(
        _add_engine(crate),
        identifier="#orchestrate",
        object=control,
        result=run,
        properties={"@type": "OrganizeAction", "name": f"Snakemake runs {name}"},
    )
    crate.root_dataset.append_to("mentions", run)
    return run


def _add_engine(crate):
    from rocrate.model.contextentity import ContextEntity

    return crate.add(
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
