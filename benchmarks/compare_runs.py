"""Prove that a change of the code changes no number: the jobs it plans and the tables it makes.

python benchmarks/compare_runs.py specs CONFIG OUT.jsonl
    every job of a configuration, one JSON line each: its first output, subcommand,
    canonical spec, input files, the file options beside its spec, memory request and the
    paths it writes; then the targets of `all`. Two such files compare with `cmp` or
    `diff` (dump one before the change and one after).
python benchmarks/compare_runs.py tables BEFORE AFTER
    every Parquet, CSV and TSV table under two run folders (results/<run>/ of two
    checkouts): the same files, and each equal to the other in every cell but the timing
    columns (wall-clock seconds differ from run to run). Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

TABLE_SUFFIXES = (".parquet", ".csv", ".tsv")
# Files whose every row is about the machine and the moment: host, versions, times.
SKIPPED = ("provenance.tsv",)


def timing(column: str) -> bool:
    """Whether a column holds measured wall-clock time (epoch_time, fit_time, time_to_best,
    train_time, speedup, ...), which no two runs share."""
    name = column.lower()
    return name.endswith(("time", "_s", "seconds")) or "time_" in name or "speedup" in name


def dump_specs(config: str, out: str) -> int:
    from whcore.pipeline.config.schema import SCHEMA_PATH
    from whcore.pipeline.contract import load_contract

    contract = load_contract(config, str(SCHEMA_PATH))
    with open(out, "w") as stream:
        for path, job in sorted(contract.jobs.items()):
            row = {
                "path": path,
                "subcommand": job.spec.SUBCOMMAND,
                "spec": job.spec_json,
                "inputs": list(job.inputs),
                "command_inputs": contract.command_inputs(job),
                "mem_mb": job.mem_mb,
                "writes": contract.written_by(job),
            }
            stream.write(json.dumps(row, sort_keys=True) + "\n")
        stream.write(json.dumps({"targets": contract.targets()}) + "\n")
    print(f"{config}: {len(contract.jobs)} jobs -> {out}")
    return 0


def _read(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")


def _tables(root: Path) -> set[Path]:
    return {
        path.relative_to(root)
        for path in root.rglob("*")
        if path.suffix in TABLE_SUFFIXES and path.name not in SKIPPED
    }


def table_difference(before: Path, after: Path) -> str | None:
    """None where the two tables agree in every cell but the timing columns, else why not."""
    old, new = _read(before), _read(after)
    if list(old.columns) != list(new.columns):
        return f"columns differ: {sorted(set(old.columns) ^ set(new.columns))}"
    kept = [c for c in old.columns if not timing(c)]
    try:
        pd.testing.assert_frame_equal(old[kept], new[kept], check_exact=True)
    except AssertionError as err:
        return str(err).splitlines()[0]
    return None


def compare_tables(before: str, after: str) -> int:
    roots = Path(before), Path(after)
    old, new = _tables(roots[0]), _tables(roots[1])
    for path in sorted(old ^ new):
        print(f"only in {'the first' if path in old else 'the second'} run: {path}")
    different = 0
    for path in sorted(old & new):
        why = table_difference(roots[0] / path, roots[1] / path)
        if why:
            different += 1
            print(f"{path}: {why}")
    print(
        f"{len(old & new) - different} of {len(old & new)} tables identical (timing columns "
        f"aside), {different} different, {len(old ^ new)} in one run only"
    )
    return 1 if different or old ^ new else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("specs", help="dump every job of a configuration")
    p.add_argument("config")
    p.add_argument("out")
    p = sub.add_parser("tables", help="compare the tables of two run folders")
    p.add_argument("before")
    p.add_argument("after")
    args = parser.parse_args(argv)
    if args.what == "specs":
        return dump_specs(args.config, args.out)
    return compare_tables(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
