"""The ``whcore`` command line: one subcommand per pipeline step (what Snakemake rules call)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import ablation, baselines, datasets

__all__ = ["main"]


def _cmd_train(args) -> None:
    from .io import write_parquet
    from .jobs import run_job
    from .spec import load_spec, validate_spec

    spec = validate_spec(json.loads(args.spec_json), "--spec-json") if args.spec_json else (
        load_spec(args.spec))
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    records, spectra = run_job(spec, log=lambda msg: print(msg, flush=True))
    meta = {"spec": spec, "wall_time": time.perf_counter() - start}
    if spectra is not None and args.spectra:
        write_parquet(spectra, args.spectra, meta)
    elif args.spectra:
        raise SystemExit("--spectra was given but the spec does not record spectra (spectrum: true)")
    write_parquet(records, args.out, meta)
    ok = records[records["status"] == "ok"]
    best = ok.loc[ok.groupby("seed")["val_mse"].idxmin()] if len(ok) else ok
    print(f"wrote {args.out}: {records['seed'].nunique()} seeds, {len(records)} records, "
          f"mean best-val test R^2 {best.get('test_r2', best['val_r2']).mean():.4f}, "
          f"{meta['wall_time']:.1f}s")


def _add_train(sub) -> None:
    p = sub.add_parser("train", help="train one job (all its seeds) and write its records")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--spec", help="YAML/JSON spec file")
    src.add_argument("--spec-json", help="the spec as a JSON string")
    p.add_argument("--out", required=True, help="records Parquet (written atomically)")
    p.add_argument("--spectra", help="also write per-epoch spectra here (spectrum: true)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for PyTorch (the job's share of cores; 0: PyTorch's default)")
    p.set_defaults(func=_cmd_train)


def _cmd_synthetic(args) -> None:
    from .io import atomic_path
    from .synthetic import degree_ladder, random_sparse

    if args.family == "degree_ladder":
        target = degree_ladder(args.n, args.max_degree, args.seed)
    else:
        if args.k is None:
            raise SystemExit("--family random_sparse needs --k (the number of frequencies)")
        target = random_sparse(args.n, args.k, args.max_degree, args.seed)
    with atomic_path(args.out) as tmp:
        target.to_json(tmp)
    print(f"wrote {args.out}: n = {target.n}, k = {target.k}, degrees {target.degrees.tolist()}")


def _add_synthetic(sub) -> None:
    p = sub.add_parser("synthetic", help="draw a sparse target function g*")
    p.add_argument("--family", choices=["degree_ladder", "random_sparse"], required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--max-degree", type=int, default=5)
    p.add_argument("--k", type=int)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_cmd_synthetic)


def _cmd_aggregate(args) -> None:
    from pathlib import Path

    from . import tables
    from .io import write_parquet

    if args.experiment == "spectrum":
        out = tables.spectrum_tables(args.runs, args.spectra or [], args.targets or [],
                                     args.figure_train_size)
    elif args.experiment == "synthetic":
        out = tables.synthetic_tables(args.runs)
    else:
        out = tables.real_tables(args.runs or [], args.baselines or [])
    for name, frame in out.items():
        write_parquet(frame, Path(args.out_dir) / f"{name}.parquet")
        print(f"wrote {args.out_dir}/{name}.parquet: {len(frame)} rows")
    from .aggregate import divergence_report

    print(divergence_report(out[f"{args.experiment}_selected"]))


def _add_aggregate(sub) -> None:
    p = sub.add_parser("aggregate", help="run records -> an experiment's tidy tables")
    p.add_argument("experiment", choices=["spectrum", "synthetic", "real"])
    p.add_argument("--runs", nargs="*", default=[], help="network run records (Parquet)")
    p.add_argument("--spectra", nargs="*", help="spectrum experiment: per-epoch spectra files")
    p.add_argument("--targets", nargs="*", help="spectrum experiment: the g* files")
    p.add_argument("--figure-train-size", type=int, default=200,
                   help="spectrum experiment: train size of the heatmaps")
    p.add_argument("--baselines", nargs="*", help="real data: baseline records")
    p.add_argument("--out-dir", required=True, help="folder for the tables")
    p.set_defaults(func=_cmd_aggregate)


def _cmd_figure(args) -> None:
    from pathlib import Path

    import pandas as pd

    from .figures.registry import draw_figure
    from .figures.style import save_figure

    tables = {Path(path).stem: pd.read_parquet(path) for path in args.tables}
    fig = draw_figure(args.figure, tables, json.loads(args.settings))
    for path in save_figure(fig, args.out):
        print(f"wrote {path}")


def _add_figure(sub) -> None:
    p = sub.add_parser("figure", help="draw one paper figure (PDF and PNG) from its tables")
    p.add_argument("figure", help="figure id, e.g. fig5a_real_r2")
    p.add_argument("--tables", nargs="+", required=True, help="the tables it reads (Parquet)")
    p.add_argument("--settings", default="{}", help="JSON: figure settings from the config")
    p.add_argument("--out", required=True, help="output path without suffix")
    p.set_defaults(func=_cmd_figure)


def _cmd_claims(args) -> None:
    from pathlib import Path

    import pandas as pd

    from .claims import evaluate_claims, write_claims

    tables = {Path(path).stem: pd.read_parquet(path) for path in args.tables}
    claims = evaluate_claims(tables)
    write_claims(claims, args.out_md, args.out_json)
    for claim in claims:
        print(f"{claim.verdict:>14}  {claim.id}")


def _add_claims(sub) -> None:
    p = sub.add_parser("claims", help="check the paper's claims against the tables")
    p.add_argument("--tables", nargs="+", required=True, help="experiment tables (Parquet)")
    p.add_argument("--out-md", required=True)
    p.add_argument("--out-json", required=True)
    p.set_defaults(func=_cmd_claims)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="whcore", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_train, _add_synthetic, _add_aggregate, _add_figure, _add_claims, datasets.add_cli,
                baselines.add_cli, ablation.add_cli):
        add(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, FileNotFoundError) as err:
        print(f"whcore {args.command}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
