#!/usr/bin/env bash
# The GPU check: everything the project measures on a GPU, in one run of at most 14 minutes
# (each step has its own time limit; a step that runs out keeps the rows it has written, and
# the other steps still run).
#
#   bash benchmarks/gpu_check.sh                     # results in $OUT (benchmarks/results/gpu)
#   CHECK_DEVICE=cpu bash benchmarks/gpu_check.sh    # a rehearsal of every step on a CPU
#
# On a machine without network (the lent GPU machines), run benchmarks/gpu_prepare.sh here
# first and send .whcore/device and resources/data along; this script then installs whcore
# (editable, no dependencies) and the prepared wheels offline before its first step. Elsewhere
# it needs whcore installed with a CUDA build of PyTorch, and resources/data/*.parquet for the
# real-data rows of the cost table (built here from WHCORE_DATA_MIRROR when it is set and
# Snakemake is installed).
#  1. the CUDA tests (pytest -m gpu): fused FWHT kernel, stacked training on the GPU;
#  2. FWHT (fused kernel when installed, fallback) vs the dense product; the HashWH step vs the
#     same step with fixed points; an EN-S step vs plain matrix products of the same shapes;
#  3. grouped jobs vs one configuration per job (HashWH, spectrum and synthetic cells), with
#     each side's achieved FLOP/s against a large matrix product;
#  4. one representative job per group of the grid (experiment, real dataset, method, b or m,
#     stacked or not) at paper settings for 1 and 2 epochs, turned into a per-group and
#     full-grid GPU-hour table (cost.md, for the README);
#  5. the opt-in precisions (TF32, bf16) against fp32: test R^2 and time of two grouped jobs;
#  6. many networks per launch: a HashWH step at 20-2,000 stacked networks, eager and as one
#     CUDA graph, per shape of the grid (benchmarks/bench_launch.py); a grouped HashWH job
#     trained eagerly and replayed from CUDA graphs, its records compared (bench_graphs.py);
#  7. the decisive configuration (config/decisive.yaml): one representative job per group at
#     its settings (the spectrum's 500 epochs, 100 elsewhere), projected to its whole grid;
#  8. the same as stack_units runs it: one representative cell per group (a cell's jobs as one
#     job, one stacked model), projected to its whole grid: what one GPU takes for the design.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-benchmarks/results/gpu}"
DEVICE="${CHECK_DEVICE:-cuda}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
log="$OUT/gpu_check.log"
step() {  # step SECONDS NAME COMMAND...: run with a time limit, log, never stop the script
  local limit=$1 name=$2
  shift 2
  echo "== $name (at most ${limit}s)" | tee -a "$log"
  local start=$SECONDS
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - start))s" | tee -a "$log"
}

if ! "$PY" -c 'import whcore.pipeline.jobs' 2>/dev/null; then
  echo "installing whcore from this checkout (offline)" | tee -a "$log"
  if [ -d .whcore/device/wheels ]; then
    "$PY" -m pip install --quiet --no-index --find-links .whcore/device/wheels jsonschema 2>&1 |
      tee -a "$log"
  fi
  "$PY" -m pip install --quiet --no-build-isolation --no-deps -e . 2>&1 | tee -a "$log"
  "$PY" -c 'import whcore.pipeline.jobs' 2>&1 | tee -a "$log" || {
    echo "whcore cannot be imported: run benchmarks/gpu_prepare.sh and carry .whcore/device" |
      tee -a "$log"
    exit 1
  }
fi
if [ "$DEVICE" = cpu ]; then
  quick_epochs=2
  echo "rehearsal on the CPU: every step runs, with 2 epochs where a step trains" | tee -a "$log"
else
  quick_epochs=20
  "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else "no CUDA device visible")' || exit 1
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
fi
"$PY" -c 'import torch, whcore; print("torch", torch.__version__, "cuda", torch.version.cuda, "whcore", whcore.__version__)' | tee -a "$OUT/gpu.txt"

if [ -n "${WHCORE_DATA_MIRROR:-}" ] && command -v snakemake >/dev/null; then
  step 25 "real datasets" snakemake resources/data/entacmaea.parquet \
    resources/data/sgemm.parquet resources/data/gb1.parquet resources/data/avgfp.parquet \
    --cores 4 --configfile config/quick.yaml
fi
# Only the modules that hold GPU tests: the others import what this check does not need.
step 35 "CUDA tests" "$PY" -m pytest -q -p no:cacheprovider -m gpu $(grep -rl --include='test_*.py' 'mark.gpu' tests)
step 75 "FWHT, HashWH step, EN-S throughput" "$PY" benchmarks/run.py --device "$DEVICE" --quick \
  --parts fwht,step,ens_throughput --out "$OUT/bench.json"
step 100 "grouped vs one per job" "$PY" benchmarks/bench_grouped.py --device "$DEVICE" \
  --epochs "$quick_epochs" --methods hashwh --out "$OUT/grouped.json"
step 155 "cost table" "$PY" benchmarks/bench_jobs.py --device "$DEVICE" --epochs 100 \
  --single-run-above 10 --out "$OUT/cost.json" --markdown "$OUT/cost.md"
step 30 "precision" "$PY" benchmarks/bench_precision.py --device "$DEVICE" \
  --epochs "$quick_epochs" --out "$OUT/precision.json"
# A CPU rehearsal runs the two light shapes at small stacks (GB1's width-800 step is seconds).
launch=(--sizes 20,100,500,2000)
[ "$DEVICE" = cpu ] && launch=(--sizes 20,40 --cases spectrum,synthetic)
step 225 "networks per launch" "$PY" benchmarks/bench_launch.py --device "$DEVICE" \
  "${launch[@]}" --steps 30 --out "$OUT/launch.json"
step 90 "training replayed from CUDA graphs" "$PY" benchmarks/bench_graphs.py --device "$DEVICE" \
  --epochs "$quick_epochs" --out "$OUT/graphs.json"
step 45 "the decisive configuration" "$PY" benchmarks/bench_jobs.py --device "$DEVICE" \
  --configfile config/decisive.yaml --epochs 100 --single-run-above 10 \
  --out "$OUT/decisive.json" --markdown "$OUT/decisive.md"
step 60 "the decisive configuration, a cell's jobs as one" "$PY" benchmarks/bench_jobs.py \
  --device "$DEVICE" --configfile config/decisive.yaml --stack-units --epochs 100 \
  --single-run-above 10 --out "$OUT/decisive_cells.json" --markdown "$OUT/decisive_cells.md"
echo "results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
