"""The target job: a synthetic target function g*, deterministic from its seed."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec, SpecError

__all__ = ["TargetSpec"]

FAMILIES = ("degree_ladder", "random_sparse")


@dataclass(frozen=True)
class TargetSpec(JobSpec):
    """A synthetic target function g*, deterministic from its seed."""

    KIND, SUBCOMMAND, OUTPUTS = "target", "target", ("target",)
    HELP = "draw a sparse target function g*"

    family: str
    n: int
    max_degree: int
    seed: int
    outputs: dict
    k: int | None = None  # the number of frequencies (random_sparse)

    def check(self, source: str) -> None:
        super().check(source)
        if self.family not in FAMILIES:
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

    def run(self, args, outputs) -> None:
        target = self.build()
        out = self.outputs["target"]
        with outputs.file(out) as tmp:
            target.to_json(tmp)
        print(f"wrote {out}: n = {target.n}, k = {target.k}, degrees {target.degrees.tolist()}")


Spec = TargetSpec
