"""The download-own job: a user's dataset file fetched from its url (sha256-checked)."""

from __future__ import annotations

from dataclasses import dataclass

from .spec import JobSpec

__all__ = ["DownloadOwnSpec"]


@dataclass(frozen=True)
class DownloadOwnSpec(JobSpec):
    """A user's dataset file fetched from its url (sha256-checked)."""

    KIND, SUBCOMMAND, OUTPUTS = "download_own", "download-own", ("raw",)
    HELP = (
        "fetch your dataset's file from its url (sha256 checked; spec fields: dataset, url, "
        "sha256; outputs: raw)"
    )

    dataset: str
    url: str
    sha256: str
    outputs: dict

    def replaceable(self) -> list[str]:
        """A file already there with the pinned sha256 is kept as it is, whoever wrote it."""
        from pathlib import Path

        from ...data.download import sha256_of

        raw = Path(self.outputs["raw"])
        return [] if raw.is_file() and sha256_of(raw) == self.sha256.lower() else self.written()

    def run(self, args, outputs) -> None:
        import sys
        from pathlib import Path

        from ...data.download import fetch, mirror_warning

        if warning := mirror_warning():
            print(warning, file=sys.stderr, flush=True)
        out = self.outputs["raw"]
        path = fetch(Path(out).name, self.sha256, out, (self.url,), subdir=self.dataset)
        print(f"{path}: ok (sha256 {self.sha256})")


Spec = DownloadOwnSpec
