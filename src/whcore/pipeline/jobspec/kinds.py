"""The spec of each kind of job but training (``train.py``): its fields, defaults and outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import JobSpec, SpecError, optional
from .train import DataSplit

__all__ = [
    "AGGREGATE_TABLES",
    "AblationSpec",
    "AggregateSpec",
    "BaselinesSpec",
    "ClaimsSpec",
    "DownloadUserSpec",
    "EntacmaeaEnergySpec",
    "EpistasisFigureSpec",
    "EpistasisSpec",
    "FigureSpec",
    "TargetSpec",
    "UserDataSpec",
]

TARGET_FAMILIES = ("degree_ladder", "random_sparse")
# The tables each experiment's aggregation writes.
AGGREGATE_TABLES = {
    "spectrum": ("spectrum_selected", "spectrum_epochs", "spectrum_heatmap"),
    "synthetic": ("synthetic_selected", "synthetic_summary", "synthetic_curves", "synthetic_runs"),
    "real": ("real_selected", "real_summary"),
    "protocol": ("protocol",),  # one per dataset under ProteinGym's protocol
}


@dataclass(frozen=True)
class TargetSpec(JobSpec):
    """A synthetic target function g*, deterministic from its seed."""

    KIND, SUBCOMMAND, OUTPUTS = "target", "synthetic", ("target",)

    family: str
    n: int
    max_degree: int
    seed: int
    outputs: dict
    k: int | None = None  # the number of frequencies (random_sparse)

    def check(self, source: str) -> None:
        super().check(source)
        if self.family not in TARGET_FAMILIES:
            raise SpecError(
                f"{source}: field family: {self.family!r} is not degree_ladder or random_sparse"
            )
        if self.family == "random_sparse" and self.k is None:
            raise SpecError(f"{source}: family random_sparse needs k (the number of frequencies)")

    def build(self):
        """The target function (a ``whcore.data.synthetic.SparseTarget``)."""
        from ...data.synthetic import degree_ladder, random_sparse

        if self.family == "degree_ladder":
            return degree_ladder(self.n, self.max_degree, self.seed)
        return random_sparse(self.n, self.k, self.max_degree, self.seed)


@dataclass(frozen=True)
class BaselinesSpec(JobSpec):
    """A baseline family's grid on one split of a dataset (the networks' split)."""

    KIND, SUBCOMMAND, OUTPUTS = "baselines", "baselines", ("records",)

    dataset: str
    family: str
    grid: dict
    data: DataSplit
    outputs: dict

    def inputs(self) -> tuple[str, ...]:
        return (self.data.path,)


@dataclass(frozen=True)
class AblationSpec(JobSpec):
    """A random forest's exact spectrum, pruned by degree and by amplitude (Figure 5c)."""

    KIND, SUBCOMMAND, OUTPUTS = "ablation", "ablation", ("table",)

    dataset: str
    data: str
    train_size: int
    test_size: int
    max_depth: int
    n_trees: int
    steps: int
    seed: int
    outputs: dict
    standardize: bool = optional(True)
    repeats: int = optional(1)  # forests with seeds seed, seed + 1, ...

    def inputs(self) -> tuple[str, ...]:
        return (self.data,)


@dataclass(frozen=True)
class EntacmaeaEnergySpec(JobSpec):
    """Entacmaea's exact spectrum: energy per degree of its top coefficients (Figure 5d)."""

    KIND, SUBCOMMAND, OUTPUTS = "entacmaea_energy", "entacmaea-energy", ("table",)
    OPTIONAL_OUTPUTS = ("coefficients",)

    data: str
    outputs: dict
    top: int = 100
    include_constant: bool = optional(False)

    def inputs(self) -> tuple[str, ...]:
        return (self.data,)


@dataclass(frozen=True)
class AggregateSpec(JobSpec):
    """An experiment's tidy tables from its run records (model selection on validation)."""

    KIND, SUBCOMMAND, OUTPUTS = "aggregate", "aggregate", ()

    experiment: str
    outputs: dict
    figure_train_size: int | None = optional(None)  # the spectrum experiment's
    dataset: str | None = optional(None)  # the protocol's: one aggregation per dataset

    def check(self, source: str) -> None:
        if self.experiment not in AGGREGATE_TABLES:
            raise SpecError(
                f"{source}: field experiment: {self.experiment!r} is not one of "
                f"{', '.join(AGGREGATE_TABLES)}"
            )
        if (self.experiment == "protocol") != (self.dataset is not None):
            raise SpecError(f"{source}: field dataset: given for (and only for) protocol")
        tables = AGGREGATE_TABLES[self.experiment]
        if sorted(self.outputs) != sorted(tables):
            raise SpecError(f"{source}: field outputs must name {', '.join(tables)}")
        if self.experiment == "spectrum" and self.figure_train_size is None:
            raise SpecError(f"{source}: field figure_train_size: missing (spectrum)")


@dataclass(frozen=True)
class FigureSpec(JobSpec):
    """One paper figure (PDF and PNG) from its tables."""

    KIND, SUBCOMMAND, OUTPUTS = "figure", "figure", ("stem",)

    figure: str
    outputs: dict
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimsSpec(JobSpec):
    """The paper's claims checked against the tables, with the tables' provenance."""

    KIND, SUBCOMMAND, OUTPUTS = "claims", "claims", ("md", "json")
    OPTIONAL_OUTPUTS = ("provenance",)

    outputs: dict
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DownloadUserSpec(JobSpec):
    """A user's dataset file fetched from its url (sha256-checked)."""

    KIND, SUBCOMMAND, OUTPUTS = "download_user", "download-user", ("raw",)

    dataset: str
    url: str
    sha256: str
    outputs: dict


@dataclass(frozen=True)
class UserDataSpec(JobSpec):
    """A user's dataset binarized into its design matrix."""

    KIND, SUBCOMMAND, OUTPUTS = "user_data", "binarize-user", ("data",)

    dataset: str
    raw: str
    source: dict
    outputs: dict

    def inputs(self) -> tuple[str, ...]:
        return (self.raw,)


@dataclass(frozen=True)
class EpistasisSpec(JobSpec):
    """The spectra of the selected standard and HashWH networks of a dataset."""

    KIND, SUBCOMMAND, OUTPUTS = "epistasis", "epistasis", ("interactions", "energy", "sites")

    dataset: str
    data: DataSplit
    methods: list
    training: dict
    top: int
    spright: dict
    outputs: dict


@dataclass(frozen=True)
class EpistasisFigureSpec(JobSpec):
    """The figure of a dataset's learned epistasis: energy by number of sites, site-by-site
    pairwise heatmap."""

    KIND, SUBCOMMAND, OUTPUTS = "epistasis_figure", "epistasis-figure", ("stem",)

    dataset: str
    title: str
    outputs: dict
