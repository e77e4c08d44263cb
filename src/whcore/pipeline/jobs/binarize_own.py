"""The binarize-own job: a dataset of your own binarized into its design matrix."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec

__all__ = ["BinarizeOwnSpec"]


@dataclass(frozen=True)
class BinarizeOwnSpec(JobSpec):
    """A user's dataset binarized into its design matrix."""

    KIND, SUBCOMMAND, OUTPUTS = "binarize_own", "binarize-own", ("data",)
    HELP = "binarize your dataset (spec fields: dataset, raw, source; outputs: data)"

    dataset: str
    raw: str
    source: dict
    outputs: dict

    def inputs(self) -> tuple[str, ...]:
        return (self.raw,)

    def output_kind(self) -> str:
        return f"data:{self.dataset}"

    def run(self, args, outputs) -> None:
        from ...data.loading import discard_failed
        from ...data.own_data import binarized

        out = self.outputs["data"]
        try:
            parsed, meta = binarized(self.dataset, self.raw, self.source)
        except BaseException:
            discard_failed(out, self.dataset)  # never a stale table under the name of a new one
            raise
        outputs.table("data", parsed.frame, **meta)
        print(f"wrote {out}: {parsed.summary()}")


Spec = BinarizeOwnSpec
