"""The environment variables whcore reads, each checked at a command's start, and those the
workflow sets for its jobs.

A bad value is refused in one line naming the variable, the value and the fix, instead of a
traceback from wherever the value is first used.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from ..runtime.processes import PARENT_ENV
from .slurm import DEFAULT_WAIT_MINUTES, WAIT_VARIABLE

__all__ = ["EnvironmentValueError", "VARIABLES", "check_environment", "job_environment"]


class EnvironmentValueError(ValueError):
    """An environment variable whose value whcore cannot use."""


# name -> (a full-match pattern of the values allowed, what they mean)
VARIABLES: dict[str, tuple[str, str]] = {
    "WHCORE_DEVICE": (r"auto|cpu|cuda|cuda:\d+", "auto, cpu, cuda or cuda:K"),
    "WHCORE_LOG_EVERY": (r"\d+", "a whole number k >= 0 (a progress line every k epochs)"),
    "WHCORE_SNAKEMAKE_PID": (r"\d*", "the process id of the Snakemake that started the job"),
    "WHCORE_FWHT": (r"auto|torch", "auto or torch (the fast Walsh-Hadamard transform to use)"),
    "WHCORE_TEST_URL_BASE": (r"(https?://\S+)?", "an http(s) URL (tests only)"),
    WAIT_VARIABLE: (
        r"\d+",
        "a whole number of minutes (how long a SLURM run waits for the jobs a killed Snakemake "
        f"left running; unset: {DEFAULT_WAIT_MINUTES})",
    ),
}


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Raise ``EnvironmentValueError`` for the first variable of ``VARIABLES`` set to a value
    outside its pattern (an unset or empty variable takes its default)."""
    environ = os.environ if environ is None else environ
    for name, (pattern, allowed) in VARIABLES.items():
        value = environ.get(name, "")
        if value and not re.fullmatch(pattern, value.strip()):
            raise EnvironmentValueError(
                f"environment variable {name}={value!r}: use {allowed}, or unset it"
            )


def job_environment(config: dict, snakemake_pid: int) -> dict[str, str]:
    """What the jobs of ``config`` read from the environment: settings that never change a
    result (device, progress-log frequency, the data mirror) and so are no part of any spec,
    the Snakemake process a training job stops with (``processes.die_with``), and a PATH that
    finds the `whcore` command installed beside this interpreter (`.venv/bin/snakemake` works
    without activating the environment)."""
    env = {
        "WHCORE_DEVICE": config["device"],
        "WHCORE_LOG_EVERY": str(config["log_every"]),
        PARENT_ENV: str(snakemake_pid),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    if config["data_mirror"]:
        env["WHCORE_DATA_MIRROR"] = config["data_mirror"]
    return env
