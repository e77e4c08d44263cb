"""The claims job: the paper's claims checked against the tables (or, for a run of only the
user's own data, the comparison of the methods on it), with the tables' provenance."""

from __future__ import annotations

from dataclasses import dataclass, field

from .figure import read_tables
from .spec import JobSpec

__all__ = ["ClaimsSpec"]


@dataclass(frozen=True)
class ClaimsSpec(JobSpec):
    """The paper's claims checked against the tables, with the tables' provenance."""

    KIND, SUBCOMMAND, OUTPUTS = "claims", "claims", ("md", "json")
    OPTIONAL_OUTPUTS = ("provenance",)
    HELP = "check the paper's claims against the tables"
    TABLES = "experiment tables (Parquet)"
    FINAL = True

    outputs: dict
    settings: dict = field(default_factory=dict)

    def run(self, args, outputs) -> None:
        tables = read_tables(args.tables)
        if self.settings.get("report") == "own_data":
            self._compare_methods(tables, outputs)
        else:
            self._check_claims(tables, outputs)
        if "provenance" in self.outputs:  # what produced the tables the claims were checked on
            from ..runtime.provenance import provenance_table

            with outputs.file(self.outputs["provenance"]) as tmp:
                provenance_table(args.tables).to_csv(tmp, sep="\t", index=False)

    def _check_claims(self, tables: dict, outputs) -> None:
        from ..claims import evaluate_claims, write_claims
        from ..experiments import claim_groups

        claims = evaluate_claims(tables, self.settings, claim_groups())
        with outputs.file(self.outputs["md"]) as md, outputs.file(self.outputs["json"]) as js:
            write_claims(claims, md, js, self.settings)
        for claim in claims:
            print(f"{claim.verdict:>14}  {claim.id}")

    def _compare_methods(self, tables: dict, outputs) -> None:
        """Every dataset is the user's own: the comparison, not the paper's claims."""
        from ..analyses.own_data import write_report

        with outputs.file(self.outputs["md"]) as md, outputs.file(self.outputs["json"]) as js:
            summary, _ = write_report(tables, md, js)
        for row in summary[summary["best"]].itertuples():
            print(
                f"{row.dataset} {row.split} {row.train_size}: best {row.method} "
                f"(test R^2 {row.mean:.4f})"
            )


Spec = ClaimsSpec
