"""The package's architecture, checked from the code: one-way layers (core, data, pipeline), the
pipeline's role folders ranked the same way, and no import circle between any two modules."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "whcore"
RANK = {"core": 0, "data": 1, "pipeline": 2}
# The pipeline's role folders, lowest first: a folder imports only from folders before it (and
# from core and data). The pipeline's two faces, `snakefile.py` (Snakemake's) and `cli.py` (the
# `whcore` command), stand above them all.
PIPELINE_ROLES = (
    "runtime",  # where a run's files live, canonical JSON, write guards, run record, provenance
    "execution",  # how jobs run: environment settings, conda deployment, SLURM, GPU claims
    "analyses",  # the analyses behind the jobs: arrays and tables in, tables (or a report) out
    "aggregation",  # run records -> tidy tables
    "figures",  # tables -> figures
    "claims",  # tables -> the paper's claims and the report
    "experiments",  # the experiment registry: what each experiment runs, writes and checks
    "jobs",  # one module per job kind: its spec and the glue that unpacks it
    "config",  # the workflow config: its schema (package data) and validation
    "contract",  # config -> the plan of jobs
    "crate",  # a finished run as an RO-Crate
    "snakefile.py",  # the Snakemake seam: what the rules of workflow/ use
    "cli.py",
)
PIPELINE_RANK = {role.removesuffix(".py"): rank for rank, role in enumerate(PIPELINE_ROLES)}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The whcore modules (or packages) a module imports, as dotted names (absolute or relative
    imports, at any depth of the module: lazy imports count too)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == "whcore")
    return found


def named_by_string() -> dict[str, set[str]]:
    """The modules that a registry imports by name at run time (``importlib``), which no import
    statement shows: each figure's plotting module, each job kind's module, each function an
    experiment's record names."""
    from whcore.pipeline import experiments, jobs
    from whcore.pipeline.figures import registry

    figures = {**registry.FIGURES, **registry.DATASET_FIGURES}.values()
    return {
        registry.__name__: {figure.module_name for figure in figures},
        jobs.__name__: {f"{jobs.__name__}.{name}" for name in jobs.MODULES},
        experiments.__name__: experiment_references(experiments.EXPERIMENTS.values()),
    }


def experiment_references(entries) -> set[str]:
    """The modules the experiments' records name ("module:function" under whcore.pipeline)."""
    from whcore.pipeline.experiments import PACKAGE

    fields = ("aggregation", "log_line", "claims", "claims_then", "scope")
    references = {getattr(entry, name) for entry in entries for name in fields}
    return {f"{PACKAGE}.{ref.split(':')[0]}" for ref in references if isinstance(ref, str) and ref}


def import_graph(named: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Every module of the package -> the modules of the package it imports, by an import
    statement or by name (``named``, default ``named_by_string()``; a name that is an attribute,
    not a module, is dropped; a package stands for its ``__init__``)."""
    named = named_by_string() if named is None else named
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {
            other
            for other in imported_modules(path) | named.get(name, set())
            if other in modules and other != name
        }
        for name, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def role(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["whcore", "pipeline"] else None


@pytest.mark.parametrize("name", sorted(RANK))
def test_no_import_runs_back_up(name):
    for module, imports in import_graph().items():
        if layer(module) == name:
            above = sorted({layer(o) for o in imports if layer(o) and RANK[layer(o)] > RANK[name]})
            assert not above, f"{module} imports {above}"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a pipeline module from a role ranked above its own."""
    found = []
    for module, imports in graph.items():
        mine = role(module)
        for other in imports if mine else ():
            theirs = role(other)
            if theirs and theirs != mine and PIPELINE_RANK[theirs] > PIPELINE_RANK[mine]:
                found.append(
                    f"{module} ({mine}) imports {other} ({theirs}), a role ranked above it"
                )
    return found


def test_the_pipeline_roles_import_only_downwards():
    assert upward_imports(import_graph()) == []


def test_no_import_circle():
    assert circles(import_graph()) == []


def test_the_pipeline_is_role_folders_and_its_two_faces():
    pipeline = PACKAGE / "pipeline"
    entries = {p.name for p in pipeline.iterdir() if p.name != "__pycache__"}
    assert entries == {*PIPELINE_ROLES, "__init__.py"}
    for folder in (role for role in PIPELINE_ROLES if not role.endswith(".py")):
        assert (pipeline / folder / "__init__.py").is_file(), folder


def test_the_checks_see_imports_and_circles():
    """The checks can fail: they find real (also lazy) imports, and a planted circle."""
    graph = import_graph()
    assert "whcore.data.download" in graph["whcore.pipeline.cli"]
    assert "whcore.core.io" in graph["whcore.pipeline.runtime.guards"]
    lazy = graph["whcore.pipeline.jobs.ablation"]  # imported inside a function
    assert "whcore.pipeline.analyses.ablation" in lazy
    planted = {**graph, "whcore.core.io": graph["whcore.core.io"] | {"whcore.pipeline.cli"}}
    assert circles(planted)
    assert layer("whcore.pipeline.cli") == "pipeline" and role("whcore.pipeline.cli") == "cli"
    assert role("whcore.pipeline.runtime.guards") == "runtime"


def test_the_checks_see_modules_a_registry_names_by_string():
    """A figure whose plotting module sits in a role above figures (planted: the crate's bundle)
    is an upward import that no import statement shows; the checks see it."""
    named = named_by_string()
    figures = "whcore.pipeline.figures.registry"
    assert "whcore.pipeline.figures.spectrum" in named[figures]
    assert "whcore.pipeline.jobs.train" in named["whcore.pipeline.jobs"]
    assert upward_imports(import_graph(named)) == []
    planted = {**named, figures: named[figures] | {"whcore.pipeline.crate.bundle"}}
    assert upward_imports(import_graph(planted)) == [
        f"{figures} (figures) imports whcore.pipeline.crate.bundle (crate), a role ranked above it"
    ]


def test_the_checks_see_functions_an_experiment_names():
    """An experiment whose claims are named in a role above the registry (planted: a function
    of the contract) is an upward import the checks see; the shipped records name none."""
    from dataclasses import replace

    from whcore.pipeline.experiments import EXPERIMENTS

    registry = "whcore.pipeline.experiments"
    named = named_by_string()
    assert "whcore.pipeline.claims.spectrum" in named[registry]
    assert "whcore.pipeline.aggregation" in named[registry]
    planted = replace(EXPERIMENTS["real"], claims="contract.reports:add_reports")
    graph = import_graph({**named, registry: experiment_references([planted])})
    assert upward_imports(graph) == [
        f"{registry} (experiments) imports whcore.pipeline.contract.reports (contract), "
        "a role ranked above it"
    ]
