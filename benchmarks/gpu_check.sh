#!/usr/bin/env bash
# The GPU check: everything the project measures on a GPU, in one run of at most 8 minutes
# (each step has its own time limit; a step that runs out leaves the others' results).
#
#   bash benchmarks/gpu_check.sh            # results in $OUT, default benchmarks/results/gpu
#
# Needs whcore installed with a CUDA build of PyTorch, and for the real-data rows of the cost
# table resources/data/*.parquet (built here from WHCORE_DATA_MIRROR when it is set).
#  1. the CUDA tests (pytest -m gpu): fused FWHT kernel, stacked training on the GPU;
#  2. FWHT (fused kernel, fallback) vs the dense product; the HashWH step vs the same step with
#     fixed points; an EN-S step vs plain matrix products of the same shapes (throughput);
#  3. grouped jobs vs one configuration per job (HashWH, spectrum and synthetic cells);
#  4. one representative job per (experiment, method) at paper settings for 1 and 2 epochs,
#     turned into a per-group and full-grid GPU-hour table (cost.md, for the README);
#  5. the opt-in precisions (TF32, bf16) against fp32: test R^2 and time of two grouped jobs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-benchmarks/results/gpu}"
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

python -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else "no CUDA device visible")' || exit 1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
python -c 'import torch, whcore; print("torch", torch.__version__, "cuda", torch.version.cuda, "whcore", whcore.__version__)' | tee -a "$OUT/gpu.txt"

if [ -n "${WHCORE_DATA_MIRROR:-}" ]; then
  step 45 "real datasets" snakemake resources/data/entacmaea.parquet \
    resources/data/sgemm.parquet resources/data/gb1.parquet resources/data/avgfp.parquet \
    --cores 4 --configfile config/quick.yaml
fi
step 45 "CUDA tests" python -m pytest -q -m gpu tests
step 90 "FWHT, HashWH step, EN-S throughput" python benchmarks/run.py --device cuda --quick \
  --parts fwht,step,ens_throughput --out "$OUT/bench.json"
step 100 "grouped vs one per job" python benchmarks/bench_grouped.py --device cuda --epochs 20 \
  --methods hashwh --out "$OUT/grouped.json"
step 150 "cost table" python benchmarks/bench_jobs.py --device cuda --epochs 100 \
  --out "$OUT/cost.json" --markdown "$OUT/cost.md"
step 40 "precision" python benchmarks/bench_precision.py --device cuda --epochs 20 \
  --out "$OUT/precision.json"
echo "results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
