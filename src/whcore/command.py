"""The ``whcore`` command's entry point: the pipeline's command line, or, where the library was
installed alone (``pip install whcore``), one line naming the extra it needs."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv=None) -> int:
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


if __name__ == "__main__":
    sys.exit(main())
