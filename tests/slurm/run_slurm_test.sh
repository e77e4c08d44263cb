#!/usr/bin/env bash
# Run a tiny configuration of the workflow on a real single-node SLURM cluster through
# profiles/slurm (snakemake-executor-plugin-slurm), then show every SLURM job id of the run and
# its final state; exit nonzero unless all of them COMPLETED and the target exists.
#
#   sudo tests/slurm/run_slurm_test.sh [WORKDIR]      (tests/test_slurm.py and .ci/run call it)
#
# Needs root (the cluster's daemons), and apt-get when SLURM and munge are not installed yet.
# Installs what is missing, starts munged, slurmctld and slurmd on 127.0.0.1 with state in
# WORKDIR/cluster (tests/slurm/cluster.sh), and stops all three on exit, whatever happens.
# The Python environment is the one on PATH (it needs whcore and snakemake with the plugin).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/whcore-slurm.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
STATE=$WORK/cluster
TARGET=fig2_sae_evolution
start=$SECONDS

"$HERE/cluster.sh" install
trap '"$HERE/cluster.sh" stop "$STATE"' EXIT
if ! "$HERE/cluster.sh" start "$STATE"; then
  tail -n 30 "$STATE"/*.log "$STATE"/munge/*.log >&2 || true
  exit 1
fi
export SLURM_CONF=$STATE/slurm.conf

# The tiny CI configuration (tests/workflow/tiny.yaml), cut to the spectrum experiment with one
# target draw and one train size: 7 Snakemake jobs (g*, 4 training jobs, aggregation, one
# figure) as 7 SLURM jobs, the training jobs two at a time on the two fake GPUs (one of them
# trains HashWH's two lambdas); enough to prove the profile without rerunning every rule, and to
# have jobs waiting, running and done when the chaos run kills Snakemake.
python - "$REPO/tests/workflow/tiny.yaml" >"$WORK/config.yaml" <<'EOF'
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
for experiment in ("synthetic", "real", "ablation", "entacmaea_energy"):
    config[experiment]["enabled"] = False
spectrum = config["spectrum"]
spectrum.update(draws=1, train_sizes=[spectrum["figure_train_size"]], figure_draw=0)
spectrum["methods"] = {
    "standard": {}, "fullwh": {"lam": [0.1]}, "hashwh": {"b": [3, 4], "lam": [0.01, 0.1]}
}
yaml.safe_dump(config, sys.stdout, sort_keys=False)
EOF

# The real profile, unchanged; only what this test cluster lacks is given on the command line:
# no accounting (squeue instead of sacct, no account), a fast first status check.
export WHCORE_SLURM_PARTITION=debug
snakemake_in() {  # the command line of a run in folder $1
  echo snakemake -s "$REPO/Snakefile" -d "$1" --configfile "$WORK/config.yaml" \
    --workflow-profile "$REPO/profiles/slurm" \
    --slurm-status-command squeue --slurm-no-account --slurm-init-seconds-before-status-checks 2 \
    "$TARGET"
}
mkdir -p "$WORK/run" "$WORK/chaos"
cd "$WORK/run"
set +e
$(snakemake_in "$WORK/run") 2>&1 | tee "$WORK/snakemake.log"
rc=${PIPESTATUS[0]}
set -e

echo
echo "== SLURM jobs of the workflow (scontrol show job) =="
ids=$(grep -oP 'submitted with SLURM jobid \K[0-9]+' "$WORK/snakemake.log" || true)
failed=0 count=0
printf '%-8s %-12s %-10s %-9s %-16s %-10s %-8s %-19s %-19s %s\n' JOBID STATE EXIT PARTITION GPUS \
  TIMELIMIT MEM START END RULE
for id in $ids; do
  info=$(scontrol show job -o "$id")
  field() { grep -oP "(^| )$1=\K[^ ]*" <<<"$info" | head -n 1; }
  state=$(field JobState)
  rule=$(field Comment | sed -E 's/^rule_//; s/_wildcards_/ /')
  printf '%-8s %-12s %-10s %-9s %-16s %-10s %-8s %-19s %-19s %s\n' "$id" "$state" \
    "$(field ExitCode)" "$(field Partition)" "$(field TresPerJob || echo -)" "$(field TimeLimit)" \
    "$(field MinMemoryNode)" "$(field StartTime)" "$(field EndTime)" "$rule"
  count=$((count + 1))
  [[ $state == COMPLETED ]] || failed=$((failed + 1))
done
echo "snakemake exit status $rc; $count SLURM jobs, $failed not COMPLETED; $((SECONDS - start)) s in all"
echo "== slurmctld log: allocations and completions =="
grep -E '_job_complete|sched: Allocate' "$STATE/slurmctld.log" | tail -n 20 || true

if ((rc != 0 || count == 0 || failed != 0)); then
  echo "SLURM test FAILED (rule logs under $WORK/run/logs, SLURM logs under $WORK/run/logs/slurm)" >&2
  exit 1
fi
test -s "$WORK/run/results/tiny/figures/$TARGET.pdf"
echo "SLURM test passed: $TARGET built by $count SLURM jobs, all COMPLETED"

# The same configuration again, disturbed: a running job cancelled, Snakemake killed, the same
# command rerun (tests/slurm/chaos.py); tests/test_slurm.py reads its report.
echo
echo "== chaos run =="
chaos_start=$SECONDS
python "$HERE/chaos.py" "$WORK/run" "$WORK/chaos" "$WORK/chaos.json" -- $(snakemake_in "$WORK/chaos")
echo "chaos run finished in $((SECONDS - chaos_start)) s; report $WORK/chaos.json"
