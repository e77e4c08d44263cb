"""The figures and claims of a run redrawn from its crate alone (``whcore render``).

``render(crate, out)`` runs the crate's figure and claims jobs (the same ``whcore`` subcommands
the workflow ran) on the crate's tables. Neither the raw data, nor the run records, nor
Snakemake are needed.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

from .bundle import JOBS
from .layout import Layout
from .runrecord import RECORD

__all__ = ["RENDERED", "render"]

RENDERED = ("figure", "epistasis_figure", "claims")  # the jobs `render` reruns


def _command(entry: dict, prefix: str, crate_dir: Path, out: Path) -> list[str]:
    """The ``whcore`` arguments of the crate's job ``entry``, its inputs read from the unpacked
    crate ``crate_dir`` and its outputs written under ``out``."""
    spec = entry["spec"]
    spec["outputs"] = {
        role: str(out / path.removeprefix(prefix)) for role, path in spec["outputs"].items()
    }
    for path in spec["outputs"].values():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    args = [entry["subcommand"], "--spec", json.dumps(spec)]
    for option, paths in entry["command_inputs"].items():
        args += [option, *(str(crate_dir / p.removeprefix(prefix)) for p in paths)]
    return args


def render(crate: str | Path, out: str | Path, log=print) -> list[Path]:
    """Rebuild every figure and the claims report of ``crate`` under ``out`` (claims.md,
    claims.json, provenance.tsv and figures/ as in the run folder); returns what it wrote."""
    from .cli import build_parser

    out = Path(out).resolve()
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(crate) as archive:
            archive.extractall(tmp)
        plan = json.loads((Path(tmp) / JOBS).read_text())
        record = json.loads((Path(tmp) / RECORD).read_text())
        prefix = f"{Layout.RESULTS}/{record['run_name']}/"
        for entry in plan:
            if entry["kind"] in RENDERED:
                parsed = build_parser().parse_args(_command(entry, prefix, Path(tmp), out))
                parsed.func(parsed)
                written += [out / p.removeprefix(prefix) for p in entry["outputs"]]
                log(f"rendered {entry['id']}")
    return written
