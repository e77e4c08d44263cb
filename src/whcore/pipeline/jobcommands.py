"""The job subcommands of ``whcore``: each reads its kind's spec and runs one job.

Every job subcommand takes its job's spec (``--spec``: a JSON string or a YAML/JSON file), as
built by ``whcore.pipeline.contract``; the spec names the outputs. Long input lists (the run
records an aggregation reads, the tables a figure reads) come as file arguments beside it.
Settings that never change a result (device, threads, log frequency) are options of their own.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .jobspec import (
    AblationSpec,
    AggregateSpec,
    BaselinesSpec,
    ClaimsSpec,
    DownloadUserSpec,
    EntacmaeaEnergySpec,
    EpistasisFigureSpec,
    EpistasisSpec,
    FigureSpec,
    TargetSpec,
    TrainSpec,
    UserDataSpec,
)
from .provenance import provenance

__all__ = ["add_job_commands"]

DEVICE_ENV, LOG_EVERY_ENV = "WHCORE_DEVICE", "WHCORE_LOG_EVERY"


def _write_table(frame, path: str, meta: dict, started: float) -> None:
    """Write a job's Parquet output unless another job wrote it for a different spec since
    ``started`` (``meta["spec"]`` is this job's)."""
    from ..core.io import write_parquet
    from .guards import refuse_superseded

    refuse_superseded(path, meta["spec"], started)
    write_parquet(frame, path, meta)


def _outputs(spec, *names: str, replaces=None) -> list[str]:
    """The spec's output paths ``names``, checked before any work: each is new or one a job of
    this project wrote (``replaces``: the paths the job will write, if not those), and their
    folders are writable."""
    from .guards import check_replaceable, check_writable

    paths = [spec.outputs[name] for name in names]
    check_replaceable(*(paths if replaces is None else replaces))
    check_writable(*paths)
    return paths


def _add_spec(p) -> None:
    p.add_argument("--spec", required=True, help="the job's spec: JSON string or YAML/JSON file")


def _add_threads(p) -> None:
    p.add_argument("--threads", type=int, default=1, help="CPU cores this job may use (1)")


# --- training ------------------------------------------------------------------------------------


def _cmd_train(args) -> None:
    from ..core.devices import choose_device
    from ..core.io import atomic_folder, write_parquet
    from .guards import refuse_superseded
    from .jobs import configuration_file, run_job

    spec = TrainSpec.read(args.spec)
    outputs = spec.outputs
    _outputs(spec, *outputs)
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    device = str(choose_device(args.device, log=lambda msg: print(msg, flush=True)))
    print(f"training {len(spec.grid)} configuration(s) x {len(spec.training['seeds'])} "
          f"seed(s) on {device}", flush=True)  # fmt: skip
    started = time.time()
    start = time.perf_counter()
    results = run_job(spec, device, args.log_every, log=lambda msg: print(msg, flush=True))
    meta = {
        "spec": spec.to_dict(),
        "wall_time": time.perf_counter() - start,
        "provenance": provenance(device),
    }
    for path in outputs.values():
        refuse_superseded(path, meta["spec"], started)
    # Spectra first: a records folder marks a finished job.
    for role in sorted(outputs, key=lambda role: role == "records"):
        with atomic_folder(outputs[role]) as folder:
            for result in results:
                frame = getattr(result, role)
                meta_of = {**meta, "params": result.params}
                write_parquet(frame, configuration_file(folder, result.params), meta_of)
    for result in results:
        ok = result.records[result.records["status"] == "ok"]
        best = ok.loc[ok.groupby("seed")["val_mse"].idxmin()] if len(ok) else ok
        print(
            f"wrote {configuration_file(outputs['records'], result.params)}: "
            f"{result.records['seed'].nunique()} seeds, {len(result.records)} records, mean "
            f"best-val test R^2 {best.get('test_r2', best['val_r2']).mean():.4f}"
        )
    print(f"{meta['wall_time']:.1f}s")


def _add_train(sub) -> None:
    p = sub.add_parser(
        "train", help="train one job (its grid of configurations, all seeds) and write records"
    )
    _add_spec(p)
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads for PyTorch (the job's share of cores; 0: PyTorch's default)",
    )
    p.add_argument(
        "--device",
        default=os.environ.get(DEVICE_ENV, "auto"),
        help=f"auto (CUDA when present; with several GPUs a free one), cpu, cuda or cuda:K "
        f"(default: ${DEVICE_ENV} or auto)",
    )
    p.add_argument(
        "--log-every",
        type=int,
        default=int(os.environ.get(LOG_EVERY_ENV, 10)),
        help=f"a progress line every k epochs, 0: none (default: ${LOG_EVERY_ENV} or 10)",
    )
    p.set_defaults(func=_cmd_train)


# --- synthetic targets ---------------------------------------------------------------------------


def _cmd_synthetic(args) -> None:
    from ..core.io import atomic_path

    spec = TargetSpec.read(args.spec)
    (out,) = _outputs(spec, "target")
    target = spec.build()
    with atomic_path(out) as tmp:
        target.to_json(tmp)
    print(f"wrote {out}: n = {target.n}, k = {target.k}, degrees {target.degrees.tolist()}")


# --- baselines and analyses ----------------------------------------------------------------------


def _cmd_baselines(args) -> None:
    from .baselines import baselines_job, select_best

    spec = BaselinesSpec.read(args.spec)
    (out,) = _outputs(spec, "records")
    started, start = time.time(), time.perf_counter()
    records = baselines_job(spec, args.threads, log=lambda m: print(m, flush=True))
    meta = {
        "spec": spec.to_dict(),
        "threads": args.threads,
        "wall_time": time.perf_counter() - start,
        "provenance": provenance(),
    }
    _write_table(records, out, meta, started)
    best = select_best(records).iloc[0]
    print(
        f"wrote {out}: {len(records)} grid points; validation-best test R^2 "
        f"{best['test_r2']:.4f}, {meta['wall_time']:.1f}s"
    )


def _cmd_ablation(args) -> None:
    from .ablation import ablation_job

    spec = AblationSpec.read(args.spec)
    (out,) = _outputs(spec, "table")
    started = time.time()
    table, info = ablation_job(spec, args.threads, log=lambda m: print(m, flush=True))
    meta = {"spec": spec.to_dict(), **info, "provenance": provenance()}
    _write_table(table, out, meta, started)
    print(f"wrote {out}: {len(table)} rows")


def _cmd_entacmaea_energy(args) -> None:
    from .entacmaea import energy_job

    spec = EntacmaeaEnergySpec.read(args.spec)
    _outputs(spec, *spec.outputs)
    out = spec.outputs["table"]
    table = energy_job(spec)
    shares = ", ".join(f"{d}: {f:.1%}" for d, f in zip(table["degree"], table["top_fraction"]) if f)
    print(f"wrote {out}: top-{spec.top} energy by degree {shares}")


# --- aggregation, figures, claims ----------------------------------------------------------------


def _cmd_aggregate(args) -> None:
    from .aggregation import divergence_report, experiment_tables

    spec = AggregateSpec.read(args.spec)
    started = time.time()
    out = experiment_tables(spec, args.runs, args.spectra, args.targets, args.baselines)
    paths = _outputs(spec, *out)
    for frame, path in zip(out.values(), paths):
        _write_table(frame, path, {"spec": spec.to_dict(), "provenance": provenance()}, started)
        print(f"wrote {path}: {len(frame)} rows")
    if spec.experiment == "protocol":
        summary = out["protocol"].drop_duplicates(["scheme", "method"])
        for row in summary.itertuples():
            print(f"{row.scheme} {row.method}: Spearman {row.spearman_mean:.4f} "
                  f"+- {row.spearman_se:.4f} over {row.folds} folds")  # fmt: skip
        return
    print(divergence_report(out[f"{spec.experiment}_selected"]))


def _add_aggregate(sub) -> None:
    p = sub.add_parser("aggregate", help="run records -> an experiment's tidy tables")
    _add_spec(p)
    p.add_argument("--runs", nargs="*", default=[], help="network run records (Parquet)")
    p.add_argument("--spectra", nargs="*", default=[], help="spectrum experiment: spectra files")
    p.add_argument("--targets", nargs="*", default=[], help="spectrum experiment: the g* files")
    p.add_argument("--baselines", nargs="*", default=[], help="real data: baseline records")
    p.set_defaults(func=_cmd_aggregate)


def _read_tables(paths) -> dict:
    import pandas as pd

    return {Path(path).stem: pd.read_parquet(path) for path in paths}


def _save_figure(fig, spec) -> None:
    """Write a figure job's PDF and PNG (its output ``stem``) with the provenance."""
    from .figures.style import save_figure

    stem = Path(spec.outputs["stem"])
    stem = stem.with_suffix("") if stem.suffix in (".pdf", ".png") else stem
    _outputs(spec, "stem", replaces=[stem.with_suffix(".pdf"), stem.with_suffix(".png")])
    for path in save_figure(fig, stem, provenance()):
        print(f"wrote {path}")


def _cmd_figure(args) -> None:
    from .figures.registry import draw_figure

    spec = FigureSpec.read(args.spec)
    _save_figure(draw_figure(spec.figure, _read_tables(args.tables), spec.settings), spec)


def _cmd_claims(args) -> None:
    from ..core.io import atomic_path
    from .claims import evaluate_claims, write_claims
    from .provenance import provenance_table

    spec = ClaimsSpec.read(args.spec)
    md, js = _outputs(spec, "md", "json")
    own_data = spec.settings.get("report") == "own_data"
    if own_data:  # every dataset is the user's own: the comparison, not the paper's claims
        from .claims.userdata import write_report

        summary, _ = write_report(_read_tables(args.tables), md, js)
    else:
        claims = evaluate_claims(_read_tables(args.tables), spec.settings)
        write_claims(claims, md, js)
    if "provenance" in spec.outputs:  # what produced the tables the claims were checked on
        (path,) = _outputs(spec, "provenance")
        with atomic_path(path) as tmp:
            provenance_table(args.tables).to_csv(tmp, sep="\t", index=False)
    if own_data:
        for row in summary[summary["best"]].itertuples():
            print(f"{row.dataset} {row.split} {row.train_size}: best {row.method} "
                  f"(test R^2 {row.mean:.4f})")  # fmt: skip
        return
    for claim in claims:
        print(f"{claim.verdict:>14}  {claim.id}")


# --- datasets by configuration and the learned epistasis ----------------------------------------


def _cmd_download_user(args) -> None:
    from ..data.download import fetch, mirror_warning, sha256_of

    spec = DownloadUserSpec.read(args.spec)
    raw = Path(spec.outputs["raw"])
    copy = raw.is_file() and sha256_of(raw) == spec.sha256.lower()  # kept as it is
    (out,) = _outputs(spec, "raw", replaces=() if copy else None)
    if warning := mirror_warning():
        print(warning, file=sys.stderr, flush=True)
    path = fetch(Path(out).name, spec.sha256, out, (spec.url,), subdir=spec.dataset)
    print(f"{path}: ok (sha256 {spec.sha256})")


def _cmd_binarize_user(args) -> None:
    from ..data.custom import binarize

    spec = UserDataSpec.read(args.spec)
    (out,) = _outputs(spec, "data")
    try:
        parsed = binarize(spec.dataset, spec.raw, out, spec.source)
    except BaseException:
        Path(out).unlink(missing_ok=True)  # never a stale table under the name of a new one
        raise
    print(f"wrote {out}: {parsed.summary()}")


def _cmd_epistasis(args) -> None:
    import pandas as pd

    from ..core.devices import choose_device
    from ..core.io import write_parquet
    from .epistasis import learned_epistasis

    spec = EpistasisSpec.read(args.spec)
    top_path, energy_path, sites_path = _outputs(spec, "interactions", "energy", "sites")
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    device = str(choose_device(args.device, log=lambda msg: print(msg, flush=True)))
    top, energy, site_sets, basis = learned_epistasis(
        spec, pd.read_parquet(args.selected), device, log=lambda msg: print(msg, flush=True)
    )
    meta = {"spec": spec.to_dict(), "provenance": provenance(device), "basis": basis}
    write_parquet(energy, energy_path, meta)
    write_parquet(site_sets, sites_path, meta)
    write_parquet(top, top_path, meta)
    print(f"basis: {basis}")
    for method, rows in site_sets.groupby("method", sort=False):
        print(f"{method}: site sets " + "; ".join(f"{{{s}}}" for s in rows["sites"].head(5)))


def _cmd_epistasis_figure(args) -> None:
    from .figures.epistasis import epistasis_figure

    spec = EpistasisFigureSpec.read(args.spec)
    _save_figure(epistasis_figure(_read_tables(args.tables), spec.to_dict()), spec)


def _add_user_commands(sub) -> None:
    _add_spec_command(sub, "download-user", "fetch your dataset's file from its url (sha256 "
                      "checked; spec fields: dataset, url, sha256; outputs: raw)",
                      _cmd_download_user)  # fmt: skip
    _add_spec_command(sub, "binarize-user", "binarize your dataset (spec fields: dataset, raw, "
                      "source; outputs: data)", _cmd_binarize_user)  # fmt: skip
    p = sub.add_parser(
        "epistasis",
        help="spectra of the selected standard and HashWH networks: top interactions, energy "
        "by number of sites and by site set (outputs: interactions, energy, sites)",
    )
    _add_spec(p)
    _add_threads(p)
    p.add_argument("--selected", required=True, help="the real_selected table")
    p.add_argument(
        "--device",
        default=os.environ.get(DEVICE_ENV, "auto"),
        help="auto, cpu, cuda or cuda:K (default: $WHCORE_DEVICE or auto)",
    )
    p.set_defaults(func=_cmd_epistasis)
    _add_spec_command(sub, "epistasis-figure", "draw the epistasis figure (energy by number of "
                      "sites, site-by-site heatmap)", _cmd_epistasis_figure,
                      tables="its three epistasis tables")  # fmt: skip


def _add_spec_command(
    sub, name: str, help: str, func, threads: bool = False, tables: str = ""
) -> None:
    """A job subcommand that takes its spec (and, for some, a share of cores, or the tables it
    reads: ``tables`` is their help text)."""
    p = sub.add_parser(name, help=help)
    _add_spec(p)
    if threads:
        _add_threads(p)
    if tables:
        p.add_argument("--tables", nargs="+", required=True, help=tables)
    p.set_defaults(func=func)


def _add_spec_commands(sub) -> None:
    _add_spec_command(sub, "synthetic", "draw a sparse target function g*", _cmd_synthetic)
    _add_spec_command(sub, "baselines", "fit a baseline family's grid on one split of a dataset",
                      _cmd_baselines, threads=True)  # fmt: skip
    _add_spec_command(sub, "ablation", "prune a random forest's exact spectrum (Figure 5c)",
                      _cmd_ablation, threads=True)  # fmt: skip
    _add_spec_command(
        sub,
        "entacmaea-energy",
        "exact WHT of Entacmaea: energy per degree of the top coefficients (spec fields: data, "
        "top, include_constant; outputs: table, optional coefficients)",
        _cmd_entacmaea_energy,
    )
    _add_spec_command(sub, "figure", "draw one paper figure (PDF and PNG) from its tables",
                      _cmd_figure, tables="the tables it reads (Parquet)")  # fmt: skip
    _add_spec_command(sub, "claims", "check the paper's claims against the tables", _cmd_claims,
                      tables="experiment tables (Parquet)")  # fmt: skip


def add_job_commands(sub) -> None:
    for add in (
        _add_train,
        _add_spec_commands,
        _add_user_commands,
        _add_aggregate,
    ):
        add(sub)
