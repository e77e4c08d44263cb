#!/usr/bin/env bash
# Run a tiny configuration of the workflow on a real single-node SLURM cluster through
# profiles/slurm (snakemake-executor-plugin-slurm) while a running job is cancelled and
# Snakemake is killed (tests/slurm/chaos.py), rerun it to completion, and compare its tables
# with those of the same configuration run locally; print every SLURM job of the run with its
# final state, resources and times. Exit nonzero if a run fails.
#
#   sudo tests/slurm/run_slurm_test.sh [WORKDIR]      (tests/slurm/test_slurm.py and .ci/run call it)
#
# Needs root (the cluster's daemons), and apt-get when SLURM and munge are not installed yet.
# Installs what is missing, starts munged, slurmctld and slurmd on 127.0.0.1 with state in
# WORKDIR/cluster (tests/slurm/cluster.sh), and stops all three on exit, whatever happens.
# The Python environment is the one on PATH (it needs whcore and snakemake with the plugin).
# tests/slurm/test_slurm.py asserts on WORKDIR/chaos.json.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/whcore-slurm.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
STATE=$WORK/cluster
TARGET=fig2_sae_evolution
start=$SECONDS

# The SLURM test case (.test/slurm/config.yaml): the spectrum experiment of the tiny CI
# configuration, one target draw and one train size; 7 Snakemake jobs as 7 SLURM jobs.
cp "$REPO/.test/slurm/config.yaml" "$WORK/config.yaml"

# The undisturbed run the chaos run's tables are compared with: the same configuration, local.
echo "== local reference run =="
snakemake -s "$REPO/Snakefile" -d "$WORK/reference" --configfile "$WORK/config.yaml" \
  --cores 2 "$TARGET" >"$WORK/reference.log" 2>&1 || {
  tail -n 40 "$WORK/reference.log" >&2
  exit 1
}
echo "local reference run done in $((SECONDS - start)) s"

"$HERE/cluster.sh" install
trap '"$HERE/cluster.sh" stop "$STATE"' EXIT
if ! "$HERE/cluster.sh" start "$STATE"; then
  tail -n 30 "$STATE"/*.log "$STATE"/munge/*.log >&2 || true
  exit 1
fi
export SLURM_CONF=$STATE/slurm.conf

# The real profile, unchanged; only what this test cluster lacks is given on the command line:
# no accounting (squeue instead of sacct, no account), a fast first status check.
export WHCORE_SLURM_PARTITION=debug
mkdir -p "$WORK/chaos"
cd "$WORK/chaos"
echo
echo "== chaos run on SLURM =="
chaos_start=$SECONDS
python "$HERE/chaos.py" "$WORK/reference" "$WORK/chaos" "$WORK/chaos.json" -- \
  snakemake -s "$REPO/Snakefile" -d "$WORK/chaos" --configfile "$WORK/config.yaml" \
  --workflow-profile "$REPO/profiles/slurm" \
  --slurm-status-command squeue --slurm-no-account --slurm-init-seconds-before-status-checks 2 \
  "$TARGET"
echo "chaos run finished in $((SECONDS - chaos_start)) s, $((SECONDS - start)) s in all"
echo "== slurmctld log: allocations and completions =="
grep -E '_job_complete|sched: Allocate' "$STATE/slurmctld.log" | tail -n 20 || true
test -s "$WORK/chaos/results/tiny/figures/$TARGET.pdf"
