"""Software deployment: the conda environment of `snakemake --sdm conda`.

Snakemake copies a rule's environment file to ``.snakemake/conda/<hash>.yaml`` before creating
the environment, so the file cannot name the checkout with a relative path. The workflow renders
``envs/whcore.yaml`` with the checkout's absolute path into the working directory and points
every rule's ``conda:`` at the rendering.
"""

from __future__ import annotations

from pathlib import Path

from ...core.io import atomic_path

__all__ = ["conda_env_file"]

PLACEHOLDER = "{checkout}"


def conda_env_file(checkout: str | Path, workdir: str | Path = ".") -> str:
    """Render ``<checkout>/envs/whcore.yaml`` for this checkout into
    ``<workdir>/.whcore/conda/whcore.yaml`` (rewritten only when it changes, so Snakemake's
    environment hash stays put) and return that path."""
    checkout = Path(checkout).resolve()
    template = checkout / "envs" / "whcore.yaml"
    text = template.read_text()
    if PLACEHOLDER not in text:
        raise ValueError(f"{template}: no {PLACEHOLDER} placeholder for the checkout's path")
    rendered = text.replace(PLACEHOLDER, str(checkout))
    path = Path(workdir).resolve() / ".whcore" / "conda" / "whcore.yaml"
    if not path.exists() or path.read_text() != rendered:
        with atomic_path(path) as tmp:
            tmp.write_text(rendered)
    return str(path)
