"""The experiments: one record each, the one place where an experiment is named.

An experiment is what a config section switches on: its training (or analysis) jobs, the tables
its aggregation writes from them, the claims checked on its tables, its scope and the units the
planner adds to it. The plan (``contract``), the aggregation job, the claims job, the planner's
command and the rules iterate over ``EXPERIMENTS``; nothing below this folder lists experiments
(the claims engine is handed its groups, ``claim_groups()``; the planner its unit keys,
``unit_keys()``). The functions a record names (its aggregation, claims, scope) are given as
"module:function" under ``whcore.pipeline`` (or as functions) and imported on use, so that planning a run never
imports the claims engine (seconds of scipy); the layer test checks them as imports.
Adding an experiment: docs/workflow.md, "Add an experiment".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

from .datasets import curve_datasets, leaderboard_datasets, own_datasets, proteingym_datasets

__all__ = [
    "EXPERIMENTS",
    "ROLES",
    "Experiment",
    "aggregated",
    "claim_groups",
    "cost_rules",
    "experiment_of_table",
    "own_data_only",
    "resolve",
    "unit_keys",
]

PACKAGE = "whcore.pipeline"
# The file options of `whcore aggregate`, by the role of the files in an aggregation: every
# aggregation reads its training records ("runs"), some read more (``Experiment.roles``).
ROLES = {
    "runs": "network run records (Parquet)",
    "spectra": "spectrum experiment: spectra files",
    "targets": "spectrum experiment: the g* files",
    "baselines": "real data: baseline records",
}


def resolve(reference: str | Callable) -> Callable:
    """The function a record names, "module:function" under ``whcore.pipeline`` (or the
    function itself, as an experiment of another package may give it)."""
    if callable(reference):
        return reference
    module, function = reference.split(":")
    return getattr(import_module(f"{PACKAGE}.{module}"), function)


@dataclass(frozen=True)
class Experiment:
    """One experiment: what runs it, what it writes, what is checked on it."""

    name: str  # the config section that switches it on; its tables' and jobs' label
    runs: Callable[[dict], bool]  # whether a validated config runs it (its tables are made)
    # Its aggregation: the tables it writes, "module:function" (the input files of each role of
    # ``roles``, in order, then ``settings`` by name) -> {table: frame}, the roles it reads beyond
    # the training records, the keys of its section the aggregation's spec takes, the rule's
    # `--list-rules` line. No tables: its analysis job writes its own.
    tables: tuple[str, ...] = ()
    aggregation: str | Callable = ""
    roles: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    summary: str = ""
    log_line: str | Callable = (
        "aggregation:selected_divergence"  # (tables) -> the aggregation's log line
    )
    # Its tables are one per dataset (``<table>_<dataset>``): the datasets of a config.
    per_dataset: Callable[[dict], list[str]] | None = None
    # Its claims: the tables the claims job reads, the group's "module:function" (tables,
    # settings) -> [Claim], one that runs on the group's claims after them, and the scope
    # (claim, tables) -> str of a claim that states none of its own.
    claim_tables: tuple[str, ...] = ()
    claims: str | Callable = ""
    claims_then: str | Callable = ""
    scope: str | Callable = ""
    units: str = ""  # the key of its section that sets its units (the planner sets it)
    cost_rules: tuple[str, ...] = ()  # rules whose jobs grow with its units, whatever their path
    section: str = ""  # the config section of its settings, where not its name

    @property
    def config_section(self) -> str:
        return self.section or self.name

    def datasets(self, config: dict) -> list[str]:
        """The datasets of its per-dataset tables (none for an experiment of one table set)."""
        return list(self.per_dataset(config)) if self.per_dataset else []

    def aggregate(self, inputs: dict, settings: dict) -> dict:
        """Its tables from its input files by role ({role: paths}) and its spec's settings."""
        function = resolve(self.aggregation)
        return function(*(inputs[role] for role in ("runs", *self.roles)), **settings)

    def claim_group(self):
        """Its claims as the engine takes them (``claims.ClaimGroup``)."""
        from ..claims import ClaimGroup

        first = self.claim_tables[0]
        return ClaimGroup(
            experiment=self.name,
            check=resolve(self.claims),
            table=None if self.per_dataset else first,
            prefix=f"{first}_" if self.per_dataset else None,
            scope=resolve(self.scope) if self.scope else None,
            then=resolve(self.claims_then) if self.claims_then else None,
        )


def _enabled(name: str) -> Callable[[dict], bool]:
    return lambda config: bool(config[name]["enabled"])


def _curve_runs(config: dict) -> bool:
    # Its tables and figures: none without a dataset on the train-size curve.
    return bool(config["real"]["enabled"] and curve_datasets(config))


EXPERIMENTS = {
    e.name: e
    for e in (
        Experiment(
            "spectrum",
            _enabled("spectrum"),
            tables=("spectrum_selected", "spectrum_epochs", "spectrum_heatmap"),
            aggregation="aggregation:spectrum_tables",
            roles=("spectra", "targets"),
            settings=("figure_train_size",),
            summary="Select models on validation: the spectrum experiment's tables "
            "(Figures 1-3, A1-A4).",
            claim_tables=("spectrum_selected", "spectrum_epochs"),
            claims="claims.spectrum:spectrum_claims",
            claims_then="claims.spectrum:window_sensitivity",
            scope="claims.scope:spectrum_scope",
            units="draws",
        ),
        Experiment(
            "synthetic",
            _enabled("synthetic"),
            tables=(
                "synthetic_selected",
                "synthetic_summary",
                "synthetic_curves",
                "synthetic_runs",
            ),
            aggregation="aggregation:synthetic_tables",
            summary="Select models on validation: the synthetic experiment's tables "
            "(Figures 4, A5, A6).",
            claim_tables=("synthetic_selected", "synthetic_runs"),
            claims="claims.synthetic:synthetic_claims",
            scope="claims.scope:synthetic_scope",
            units="draws",
        ),
        Experiment(
            "real",
            _curve_runs,
            tables=("real_selected", "real_summary"),
            aggregation="aggregation:real_tables",
            roles=("baselines",),
            summary="Select models on validation: real-data tables, networks and baselines "
            "(Figures 5a, 5b, A7).",
            claim_tables=("real_selected",),
            claims="claims.real:real_claims",
            scope="claims.scope:real_scope",
            units="data_seeds",
            cost_rules=("baselines",),
        ),
        Experiment(
            # ProteinGym's supervised protocol on the datasets asking for it: one table each.
            "proteingym",
            lambda config: bool(proteingym_datasets(config)),
            tables=("proteingym",),
            aggregation="aggregation:proteingym_tables",
            roles=("baselines",),
            summary="ProteinGym's protocol on one dataset: Spearman, MSE, R^2 per held-out "
            "fold, mean and s.e.",
            log_line="aggregation:fold_means",
            per_dataset=proteingym_datasets,
            claim_tables=("proteingym",),
            section="real",  # it trains the real experiment's methods
        ),
        Experiment(
            # ProteinGym's leaderboard mode on the datasets asking for it: one table each.
            "leaderboard",
            lambda config: bool(leaderboard_datasets(config)),
            per_dataset=leaderboard_datasets,
            claim_tables=("leaderboard",),
            section="real",
        ),
        Experiment(
            "ablation",
            _enabled("ablation"),
            per_dataset=lambda config: config["ablation"]["datasets"],
            claim_tables=("ablation",),
            claims="claims.exact:ablation_claims",
            scope="claims.scope:ablation_scope",
            units="repeats",
            cost_rules=("ablation",),
        ),
        Experiment(
            "entacmaea_energy",
            _enabled("entacmaea_energy"),
            claim_tables=("entacmaea_energy",),
            claims="claims.exact:entacmaea_claims",
            scope="claims.scope:entacmaea_scope",
        ),
    )
}


def aggregated() -> list[Experiment]:
    """The experiments whose tables an aggregation job writes."""
    return [e for e in EXPERIMENTS.values() if e.aggregation]


def experiment_of_table(name: str) -> str:
    """The experiment writing the table ``name`` (an aggregation's, or one its claims read)."""
    for experiment in EXPERIMENTS.values():
        if name in experiment.tables or name in experiment.claim_tables:
            return experiment.name
    raise KeyError(f"table {name!r}: no experiment writes it (whcore.pipeline.experiments)")


def claim_groups() -> list:
    """The claim groups in the report's order: those over one table per dataset (the
    ablation's forests), the hashing lemma's identities (no experiment's), then the others in
    the registry's order."""
    from ..claims import IDENTITIES

    groups = [e.claim_group() for e in EXPERIMENTS.values() if e.claims]
    per_dataset = [g for g in groups if g.prefix]
    return [*per_dataset, IDENTITIES, *(g for g in groups if not g.prefix)]


def unit_keys() -> dict[str, tuple[str, str]]:
    """Where the workflow reads each experiment's number of units: {experiment: (section,
    key)} (workflow/schemas/config.schema.yaml)."""
    return {e.name: (e.config_section, e.units) for e in EXPERIMENTS.values() if e.units}


def cost_rules() -> dict[str, str]:
    """Rules whose jobs belong to an experiment whatever their output path: {rule: experiment}."""
    return {rule: e.name for e in EXPERIMENTS.values() for rule in e.cost_rules}


def own_data_only(config: dict) -> bool:
    """Whether a validated config's datasets are all the user's own (no experiment but the
    real one and its modes, every real dataset given by file or url): its report compares the
    methods on them instead of checking the paper's claims."""
    others = [e for e in EXPERIMENTS.values() if e.config_section != "real"]
    if not config["real"]["enabled"] or any(config[e.name]["enabled"] for e in others):
        return False
    datasets = set(config["real"].get("datasets", {}))  # a disabled section may omit them
    return bool(datasets) and datasets == set(own_datasets(config))
