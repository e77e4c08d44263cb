"""The opt-in reduced precision (training.precision) against fp32: test R^2 and time.

One grouped job of the paper grid per setting -- the spectrum experiment's HashWH (b = 7) group
and the synthetic experiment's HashWH (b = 10) group of one cell -- is trained in fp32 and in
each reduced precision the device offers (bf16 autocast everywhere; TF32 matrix products on
CUDA only), same seeds, same epochs. Reports the mean over networks of the test R^2 at the
best-validation epoch, its largest change, and the wall time.

    python benchmarks/bench_precision.py [--epochs 30] [--device cpu] [--out precision.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grouped import CELLS, cell_jobs  # noqa: E402
from bench_jobs import paper_contract  # noqa: E402

from whcore.pipeline.jobs.train import TrainSpec, run_job  # noqa: E402

GROUPS = {"spectrum": 7, "synthetic": 10}  # the HashWH b of each experiment's job


def best_test_r2(results) -> list[float]:
    """Per network: test R^2 (validation R^2 where there is no test split) at its best epoch."""
    scores = []
    for result in results:
        ok = result.records[(result.records["status"] == "ok") & (result.records["epoch"] > 0)]
        best = ok.loc[ok.groupby("seed")["val_mse"].idxmin()]
        scores += best.get("test_r2", best["val_r2"]).tolist()
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30, help="epochs per network (30)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K")
    parser.add_argument("--out", help="also write the rows here (JSON)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    precisions = ["fp32", "bf16"] + (["tf32"] if args.device.startswith("cuda") else [])
    contract, tmp, rows = paper_contract(), Path(tempfile.mkdtemp(prefix="bench_prec_")), []
    for experiment, b in GROUPS.items():
        (spec,) = [
            s
            for s in cell_jobs(contract, experiment, args.epochs, tmp, ["hashwh"])
            if s["grid"][0]["b"] == b
        ]
        warm_up = copy.deepcopy(spec)
        warm_up["training"]["epochs"] = 1  # allocator, kernels, BLAS handles: not in the times
        run_job(TrainSpec.from_dict(warm_up), args.device, log=lambda msg: None)
        scores = {}
        for precision in precisions:
            run = copy.deepcopy(spec)
            run["training"]["precision"] = precision
            start = time.perf_counter()
            scores[precision] = best_test_r2(
                run_job(TrainSpec.from_dict(run), args.device, log=lambda msg: None)
            )
            seconds = time.perf_counter() - start
            fp32 = scores["fp32"]
            rows.append(
                {
                    "experiment": experiment,
                    "cell": CELLS[experiment],
                    "b": b,
                    "device": args.device,
                    "precision": precision,
                    "epochs": args.epochs,
                    "networks": len(scores[precision]),
                    "seconds": round(seconds, 2),
                    "mean_test_r2": sum(scores[precision]) / len(scores[precision]),
                    "largest_change_vs_fp32": max(
                        abs(a - f) for a, f in zip(scores[precision], fp32)
                    ),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
            if args.out:  # after every row: a run cut short keeps what it measured
                Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
