"""The ``whcore`` command's entry point: the pipeline's command line, or, where the library was
installed alone (``pip install whcore``), one line naming the extra it needs."""

from __future__ import annotations

import sys

__all__ = ["main"]


# Ctrl-C reaches every process of the terminal's group, Snakemake's jobs included: each job
# says so in one line instead of a traceback (its outputs are written under temporary names and
# renamed when complete, so an interrupted job leaves no finished-looking file).
INTERRUPTED = (
    "whcore: stopped (interrupted); nothing half-written was kept: rerun the same command "
    "(or the same snakemake command) to resume"
)


def main(argv=None) -> int:
    try:
        try:
            from .pipeline.cli import main as pipeline_main
        except ModuleNotFoundError as err:
            print(
                f"whcore: the command line needs the pipeline extra (no module {err.name!r}): "
                "pip install 'whcore[pipeline]'",
                file=sys.stderr,
            )
            return 2
        return pipeline_main(argv)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130  # 128 + SIGINT, as a shell reports a process Ctrl-C stopped


if __name__ == "__main__":
    sys.exit(main())
