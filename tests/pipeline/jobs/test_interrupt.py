"""Ctrl-C stops a `whcore` job with one line, not a traceback: the terminal sends SIGINT to
every process of its group, so each running job of a Snakemake run prints this."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from whcore.command import INTERRUPTED

# The real entry point, with the pipeline's command standing in for a long job.
SCRIPT = """
import sys, time
import whcore.pipeline.cli as cli
from whcore.command import main

def long_job(argv=None):
    print("running", flush=True)
    time.sleep(60)
    return 0

cli.main = long_job
sys.exit(main())
"""


def test_ctrl_c_stops_a_job_with_one_line():
    # A shell's background job ignores SIGINT, and its children inherit that (CI may run so):
    # the job gets the default disposition a terminal's process has.
    job = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert job.stdout.readline().strip() == "running"
    time.sleep(0.2)
    job.send_signal(signal.SIGINT)
    _, err = job.communicate(timeout=30)
    assert job.returncode == 130, err
    assert err.strip().splitlines()[-1] == INTERRUPTED  # (a warning of an import may precede)
    assert "Traceback" not in err and err.count("whcore:") == 1
