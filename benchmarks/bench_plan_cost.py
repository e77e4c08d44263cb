"""How well the planner's cost model foretold a run: the cost of a planned run's design from its
pilot's unit costs, against what the planned run's own jobs recorded, with the machine's speed
on the two days measured on the jobs both runs ran.

    python benchmarks/bench_plan_cost.py PILOT_WORKDIR PILOT_CONFIG PLANNED_WORKDIR PLANNED_CONFIG

Each working folder holds .snakemake/ and results/<run>/ of a finished run (for example the
faithful run and the decisive run planned from it). Three numbers:
1. **Foretold**: ``plan.design_cost`` of the planned run's units at the pilot's unit costs and
   fixed cost (``claims.costs.unit_costs``: core-seconds, a job's wall time times its threads),
   as ``whcore plan`` prints it.
2. **Recorded**: the core-seconds of every job the planned run's records hold.
3. **The day's speed**: jobs with the same output path below results/<run>/ in both runs (with
   pinned seeds, the same work: the pilot's draws and subsamples are the planned run's first
   ones) and the ratio of their summed core-seconds, planned over pilot, per experiment.
Recorded over foretold, divided by the day's speed, is the cost model's own error.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from whcore.pipeline.claims import plan
from whcore.pipeline.claims.costs import experiment_of, job_seconds, unit_costs
from whcore.pipeline.config.schema import SCHEMA_PATH
from whcore.pipeline.config.validation import load_config
from whcore.pipeline.experiments import cost_rules, unit_keys
from whcore.pipeline.runtime.yaml_files import read_yaml


def units_of(configfile: str) -> tuple[str, dict[str, int]]:
    """The run name and units per experiment of a configuration."""
    config = load_config(read_yaml(configfile, "config file"), str(SCHEMA_PATH))
    return config["run_name"], plan.config_units(config, unit_keys())


def by_path(workdir: str, run: str) -> dict[str, tuple[str | None, float]]:
    """Each job's output below results/<run>/ -> (its experiment, core-seconds)."""
    prefix = f"results/{run}/"
    return {
        output.removeprefix(prefix): (experiment_of(rule, output, run, cost_rules()), seconds)
        for rule, output, seconds in job_seconds(workdir)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("pilot_workdir", "pilot_config", "planned_workdir", "planned_config"):
        parser.add_argument(name)
    args = parser.parse_args()
    pilot_run, pilot_units = units_of(args.pilot_config)
    planned_run, planned_units = units_of(args.planned_config)
    costs, fixed = unit_costs(args.pilot_workdir, pilot_run, pilot_units, cost_rules())
    foretold = plan.design_cost(planned_units, costs, fixed)
    recorded = sum(seconds for *_, seconds in job_seconds(args.planned_workdir))

    pilot, planned = (
        by_path(args.pilot_workdir, pilot_run),
        by_path(args.planned_workdir, planned_run),
    )
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for path in pilot.keys() & planned.keys():
        experiment = pilot[path][0]
        if experiment is not None:
            sums[experiment][0] += pilot[path][1]
            sums[experiment][1] += planned[path][1]
            sums[experiment][2] += 1
    print(f"units: pilot {pilot_units}, planned {planned_units}")
    print(f"foretold from the pilot: {foretold:,.0f} core-seconds ({foretold / 3600:.3g} h)")
    print(f"recorded by the planned run: {recorded:,.0f} core-seconds ({recorded / 3600:.3g} h)")
    print(f"recorded / foretold: {recorded / foretold:.3f}")
    both = sum(s[0] for s in sums.values()), sum(s[1] for s in sums.values())
    for experiment, (before, after, jobs) in sorted(sums.items()):
        print(f"  the day's speed, {experiment}: {jobs} jobs run by both, {after / before:.3f}x")
    speed = both[1] / both[0]
    print(f"the day's speed, all such jobs: {speed:.3f}x (planned over pilot)")
    print(
        f"the cost model's own error (recorded / foretold / speed): {recorded / foretold / speed:.3f}"
    )


if __name__ == "__main__":
    main()
