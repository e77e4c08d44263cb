"""Where every file of the workflow lives: the one module that knows the paths.

Runs of different configurations live side by side under ``results/<run name>/`` (config key
``run_name``) with their logs under ``logs/<run name>/``; downloaded and binarized data are
shared by every run under ``resources/``. Paths are patterns with Snakemake wildcards
(``{dataset}``) and, formatted, the paths of one job.
"""

from __future__ import annotations

__all__ = ["Layout", "matches", "wildcards_of"]


def wildcards_of(pattern: str, path: str) -> dict[str, str] | None:
    """The wildcards that make ``pattern`` ``path`` (each one path component, or part of one),
    as Snakemake finds them; None where ``path`` is no instance of ``pattern``."""
    import re

    pieces = re.split(r"\{(\w+)\}", pattern)  # literal text and wildcard names, alternating
    regex, seen = "", set()
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            regex += re.escape(piece)
        else:  # a wildcard named twice must match the same text twice
            regex += f"(?P={piece})" if piece in seen else f"(?P<{piece}>[^/]+)"
            seen.add(piece)
    found = re.fullmatch(regex, path)
    return None if found is None else found.groupdict()


def matches(pattern: str, path: str) -> bool:
    """Whether ``path`` is an instance of ``pattern`` (``wildcards_of``)."""
    return wildcards_of(pattern, path) is not None


class Layout:
    """Every path of one run, as patterns with Snakemake wildcards and as paths."""

    RESOURCES = "resources"
    RAW = "resources/raw/{dataset}/{filename}"
    DATA = "resources/data/{dataset}.parquet"
    DOWNLOAD_LOG = "logs/download/{dataset}/{filename}.log"
    BINARIZE_LOG = "logs/binarize/{dataset}.log"
    RESULTS = "results"
    # the folders of the shared data, which no output may replace as a whole
    DATA_FOLDERS = (RAW.split("{")[0].rstrip("/"), DATA.split("{")[0].rstrip("/"))

    def __init__(self, run: str):
        self.run = run
        self.root = f"{self.RESULTS}/{run}"
        self.logs = f"logs/{run}"
        self.target = f"{self.root}/synthetic/{{experiment}}/{{dataset}}.json"
        # A training job's outputs are folders holding one file per configuration
        # ({param_tag}.parquet); {group} names what the configurations share (b7, default).
        stem = "{experiment}/{dataset}/{method}/{group}/size{size}_dseed{dseed}"
        self.records = f"{self.root}/runs/{stem}"
        self.spectra = f"{self.root}/spectra/{stem}"
        self.baseline = (
            f"{self.root}/runs/real/{{dataset}}/{{family}}/grid/size{{size}}_dseed{{dseed}}.parquet"
        )
        # ProteinGym's protocol: one job per (dataset, split scheme, held-out fold, method group
        # or baseline family)
        proteingym = f"{self.root}/runs/proteingym/{{dataset}}/{{scheme}}"
        self.proteingym_records = f"{proteingym}/{{method}}/{{group}}/fold{{fold}}"
        self.proteingym_baseline = f"{proteingym}/{{family}}/grid/fold{{fold}}.parquet"
        self.table = f"{self.root}/tables/{{name}}.parquet"
        self.figure = f"{self.root}/figures/{{figure}}"
        self.claims = f"{self.root}/claims"
        self.claims_md = f"{self.claims}.md"
        self.claims_json = f"{self.claims}.json"
        self.provenance = f"{self.root}/provenance.tsv"
        self.claims_log = f"{self.logs}/claims.log"
        # the finished run as one Workflow Run RO-Crate (`whcore bundle`, rule `bundle`), and as
        # a slim one (`whcore bundle --slim`, rule `bundle_slim`)
        self.crate = f"{self.root}/{run}.crate.zip"
        self.bundle_log = f"{self.logs}/bundle.log"
        self.slim_crate = f"{self.root}/{run}.slim.crate.zip"
        self.bundle_slim_log = f"{self.logs}/bundle_slim.log"
        # Snakemake's report of the run (`snakemake --report`), where the README puts it
        self.reports = (f"{self.root}/report.html", f"{self.root}/report.zip")

    def patterns(self) -> tuple[str, ...]:
        """The pattern of every file a job of this run writes, whatever its configuration (a
        folder output's files as ``<folder>/{file}``)."""
        folders = (self.records, self.spectra, self.proteingym_records)
        figures = (f"{self.figure}.pdf", f"{self.figure}.png")
        files = (self.target, self.baseline, self.proteingym_baseline, self.table, *figures)
        own = (self.claims_md, self.claims_json, self.provenance)
        return (*files, *own, *(f"{folder}/{{file}}" for folder in folders))

    def writes(self, path: str) -> bool:
        """Whether ``path`` is one a job of this run writes, by its pattern (``patterns``)."""
        return any(matches(pattern, path) for pattern in self.patterns())

    def log(self, pattern: str) -> str:
        """The log file of the job writing ``pattern`` (same wildcards, under logs/<run>/)."""
        relative = pattern.removeprefix(f"{self.root}/").removeprefix(f"{self.RESOURCES}/")
        return f"{self.logs}/{relative.removesuffix('.parquet').removesuffix('.json')}.log"

    def records_of(self, experiment: str) -> str:
        """The records pattern of one experiment's training jobs."""
        return self.records.replace("{experiment}", experiment)

    def spectra_of(self, experiment: str) -> str:
        return self.spectra.replace("{experiment}", experiment)

    def table_path(self, name: str) -> str:
        return self.table.format(name=name)

    def figure_stem(self, figure: str) -> str:
        """A figure's path without suffix (it is written as .pdf and .png)."""
        return self.figure.format(figure=figure)

    def figure_log(self, figure: str) -> str:
        return f"{self.logs}/figures/{figure}.log"

    def aggregate_log(self, experiment: str) -> str:
        return f"{self.logs}/aggregate/{experiment}.log"

    @staticmethod
    def data(dataset: str) -> str:
        return Layout.DATA.format(dataset=dataset)

    @staticmethod
    def is_resource(path: str) -> bool:
        """A path of the shared data folder (its files come from download and binarize)."""
        return path == Layout.RESOURCES or path.startswith(
            (Layout.RAW.split("{")[0], Layout.DATA.split("{")[0])
        )

    def is_other_run(self, path: str) -> bool:
        """A path under results/ of another run than this one."""
        return path.startswith(f"{self.RESULTS}/") and not path.startswith(f"{self.root}/")
