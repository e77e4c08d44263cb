"""The speed benchmarks, in one run: ratios against baselines measured side by side.

    python benchmarks/run.py [--quick] [--device cuda] [--out benchmarks/results/bench.json]
                             [--parts fwht,step,ens,vectorize,workflow] [--skip-workflow]
                             [--threads 1]

Each part is a module of benchmarks/parts/ (its docstring says what it measures):

1. fwht (``parts/wht.py``): our FWHT and the radix-2 butterflies against the dense x @ H_b,
   b = 10..14; the bytes each allocates.
2. step (``parts/step.py``): one HashWH training step against the same step on 2^b fixed
   inputs, at the real datasets' network sizes; the peak memory of a b = 16 step on avGFP.
3. ens (``parts/ens.py``): EN-S vs HashWH epoch time in the paper's runtime setting.
   ens_throughput (3b, same module, not in the default parts): one EN-S step against plain
   batched matrix products of its shapes (achieved FLOP/s), 1 and 45 members.
4. vectorize (``parts/vectorize.py``): 5 training seeds as one stacked model vs one by one,
   spectrum-evolution and Entacmaea jobs; the largest difference between the two runs' records.
   member_chunks (4b, ``parts/member_chunks.py``, not in the default parts; CPU): a stack's
   forward and backward pass in cache-sized chunks of members against one pass.
5. workflow (``parts/workflow.py``): wall time of the quick workflow on 2 cores.

Timings: A and B alternate, each repetition times both back to back, ratios are the median of the
per-repetition ratios (robust on a shared machine; ``parts/common.py``). CPU runs use
``--threads`` torch threads (default 1, as the workflow's training jobs). On a GPU: ``--device
cuda`` (times synchronize the device; memory is ``torch.cuda.max_memory_allocated``). Prints a
table, writes JSON. Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import torch

from whcore.core.devices import pick_device
from whcore.core.io import atomic_path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # parts/ and bench_ens.py
from parts import ens, member_chunks, step, vectorize, wht, workflow  # noqa: E402
from parts.common import ROOT, summary  # noqa: E402

# --parts name -> its measurement, (device, quick, reps) -> the result's entries; they run in
# this order, whatever the order of --parts.
PARTS = {
    "fwht": wht.measure,
    "step": step.measure,
    "ens": ens.measure_epoch,
    "ens_throughput": ens.measure_throughput,
    "member_chunks": member_chunks.measure,
    "vectorize": vectorize.measure,
    "workflow": workflow.measure,
}
# Each part's rows of the summary table, in the table's order.
TABLES = (wht.table, step.table, ens.table, member_chunks.table, vectorize.table, workflow.table)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and sizes")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench.json"))
    parser.add_argument("--parts", default="fwht,step,ens,vectorize,workflow")
    parser.add_argument("--skip-workflow", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: default)")
    parser.add_argument("--memory-probe", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.memory_probe:  # step's memory, measured in a fresh process (parts/step.py)
        print(json.dumps(step.memory_probe(*json.loads(args.memory_probe))))
        return
    device = pick_device(args.device)
    parts = set(args.parts.split(","))
    if args.skip_workflow:
        parts.discard("workflow")
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "device": str(device),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
            "load_avg": os.getloadavg(),
        },
        "quick": args.quick,
    }
    reps = 3 if args.quick else 7
    for name, measure in PARTS.items():
        if name in parts:
            result.update(measure(device, args.quick, reps))
    table = summary(result, TABLES)
    print(table)
    result["table"] = table
    with atomic_path(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
