"""The environment variables whcore reads, each checked at a command's start.

A bad value is refused in one line naming the variable, the value and the fix, instead of a
traceback from wherever the value is first used.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["EnvironmentValueError", "VARIABLES", "check_environment"]


class EnvironmentValueError(ValueError):
    """An environment variable whose value whcore cannot use."""


# name -> (a full-match pattern of the values allowed, what they mean)
VARIABLES: dict[str, tuple[str, str]] = {
    "WHCORE_DEVICE": (r"auto|cpu|cuda|cuda:\d+", "auto, cpu, cuda or cuda:K"),
    "WHCORE_LOG_EVERY": (r"\d+", "a whole number k >= 0 (a progress line every k epochs)"),
    "WHCORE_SNAKEMAKE_PID": (r"\d*", "the process id of the Snakemake that started the job"),
    "WHCORE_FWHT": (r"auto|torch", "auto or torch (the fast Walsh-Hadamard transform to use)"),
    "WHCORE_TEST_URL_BASE": (r"(https?://\S+)?", "an http(s) URL (tests only)"),
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
