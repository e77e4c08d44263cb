"""A kind of job is one module and one registry line: a toy kind, registered, is planned by the
contract, answered by its lookups, run by its own `whcore` subcommand and written through the
guarded writer, with nothing else touched."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TINY

from whcore.pipeline import contract, jobs
from whcore.pipeline.cli import main
from whcore.pipeline.config.schema import SCHEMA_PATH
from whcore.pipeline.contract import SUBCOMMANDS, load_contract
from whcore.pipeline.jobs import KINDS, JobSpec, register


@dataclass(frozen=True)
class CountSpec(JobSpec):
    """The toy kind: how many rows a table has, written as JSON."""

    KIND, SUBCOMMAND, OUTPUTS = "count", "count-rows", ("count",)
    HELP = "count a table's rows"
    FINAL = True

    table: str
    outputs: dict

    def inputs(self) -> tuple[str, ...]:
        return (self.table,)

    def run(self, args, outputs) -> None:
        import pandas as pd

        with outputs.file(self.outputs["count"]) as tmp:
            tmp.write_text(json.dumps({"rows": len(pd.read_parquet(self.table))}))


def add_counts(plan) -> None:
    """The toy kind's builder (an experiment's builder in ``contract.BUILDERS`` plans a kind's
    jobs): the row count of the real experiment's selected table."""
    table = plan.layout.table_path("real_selected")
    path = table.replace(".parquet", "_count.json")
    plan.add(path, CountSpec, {"table": table, "outputs": {"count": path}})


@pytest.fixture
def toy_kind(monkeypatch):
    """The registry with the toy kind in it (the line `MODULES` would hold) and its builder
    last among the contract's, then without."""
    register(CountSpec)
    monkeypatch.setattr(contract, "BUILDERS", (*contract.BUILDERS, add_counts))
    yield CountSpec
    del KINDS[CountSpec.KIND]


def test_a_registered_kind_is_planned_looked_up_and_run(toy_kind, tmp_path, monkeypatch):
    contract = load_contract(str(TINY), str(SCHEMA_PATH))
    (job,) = [job for job in contract.jobs.values() if job.kind == "count"]
    path = job.spec.outputs["count"]
    assert path in contract.targets() and contract.job_writing(path) is job
    assert contract.command_inputs(job) == {} and job.inputs == (job.spec.table,)
    assert main(["spec", str(TINY), path, "--kind"]) == 0

    monkeypatch.chdir(tmp_path)
    table = Path("t.parquet")
    import pandas as pd

    pd.DataFrame({"y": [1.0, 2.0, 3.0]}).to_parquet(table)
    spec = {"table": str(table), "outputs": {"count": "results/count.json"}}
    assert main(["count-rows", "--spec", json.dumps(spec)]) == 0
    assert json.loads(Path("results/count.json").read_text()) == {"rows": 3}
    assert main(["count-rows", "--spec", json.dumps({**spec, "rows": 1})]) == 2  # checked


def test_a_kind_is_registered_once(toy_kind):
    with pytest.raises(ValueError, match="kind 'count' or subcommand 'count-rows' is taken"):
        register(toy_kind)


def test_every_kind_of_the_registry_is_one_module_with_its_subcommand():
    assert len(jobs.MODULES) == len(KINDS) == len(set(SUBCOMMANDS.values()))
    for name in jobs.MODULES:
        module = __import__(f"whcore.pipeline.jobs.{name}", fromlist=["Spec"])
        assert module.Spec.__module__ == module.__name__, name
