"""Part 5, workflow: wall time of ``snakemake --cores 2 --configfile config/quick.yaml`` in a
fresh directory (data from WHCORE_DATA_MIRROR, default ../shared/datasets/raw)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from .common import MIRROR, ROOT, met


def bench_workflow(cores: int = 2) -> dict:
    with tempfile.TemporaryDirectory(prefix="whcore-quick-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            str(cores),
            "--configfile",
            str(ROOT / "config" / "quick.yaml"),
            "-d",
            tmp,
            "-s",
            str(ROOT / "Snakefile"),
            "--quiet",
        ]
        env = {
            **os.environ,
            "WHCORE_DATA_MIRROR": MIRROR,  # the rules call `whcore`
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
        }
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
    result = {
        "command": " ".join(cmd[1:]),
        "cores": cores,
        "wall_s": wall,
        "returncode": proc.returncode,
    }
    if proc.returncode:
        result["stderr_tail"] = proc.stderr[-3000:]
    print(f"workflow (quick, {cores} cores): {wall:.0f}s, exit {proc.returncode}", flush=True)
    return result


def measure(device: torch.device, quick: bool, reps: int) -> dict:
    return {"workflow": bench_workflow()}


def table(result: dict) -> list[str]:
    wf = result.get("workflow")
    if not wf:
        return []
    return [
        f"| 5 quick workflow | --cores {wf['cores']} | {wf['wall_s']:.0f} s "
        f"(exit {wf['returncode']}) | | <= 600 s | "
        f"{met(wf['wall_s'] <= 600 and not wf['returncode'])} |"
    ]
