"""The figures and claims of a run redrawn from its crate alone (``whcore render``).

A crate may come from anyone, so ``render`` interprets it; it executes nothing the crate names.
The crate is opened within bounds and checked against its own metadata (``crate.open``); its
plan (``jobs.json``) is read as data: of its jobs, only the kinds in ``RENDERERS`` are drawn,
each by its kind's own function, whatever subcommand or other kind the plan names. Before
anything is drawn, every job's spec is checked as its kind checks specs, each table it reads
must be a checked member of the crate, and each file it writes must be one of the run's own
outputs that the crate holds, written at the same place under ``out``: nothing outside ``out``
is opened or written, and no network, data or GPU is touched. Neither the raw data, nor the run
records, nor Snakemake are needed.

A slim crate (``crate.slim``) lists in its metadata the files of the run it left out and the
tables it cut to the values the claims read: a job may write a file left out (a figure that
``render`` redraws from the tables kept), and a figure whose table is left out or cut is not
drawn: its PDF, a checked member, is copied and ``notice`` says so. A job that needs a member
the crate left out, and has no copy, is refused naming the member.

Drawing takes time in what the crate says, so that is bounded too: every string of a job's spec
(a run name, a title) and the number of its values, the rows and columns of the tables a job
reads (refused before anything is drawn), and the whole render's time (``seconds``).
"""

from __future__ import annotations

import re
import shutil
import signal
import tempfile
import threading
from argparse import Namespace
from contextlib import contextmanager
from pathlib import Path

from ...core.io import atomic_path
from ..jobs.claims import ClaimsSpec
from ..jobs.epistasis_figure import EpistasisFigureSpec
from ..jobs.figure import FigureSpec
from ..jobs.spec import SpecError
from ..jobs.writer import Outputs
from ..runtime.guards import check_replaceable
from ..runtime.layout import Layout
from ..runtime.runrecord import RECORD
from .bundle import JOBS
from .open import CrateError, OpenedCrate, open_crate, safe_member
from .slim import COPIED, cut_tables, left_out

__all__ = ["MAX_SECONDS", "RENDERERS", "CrateError", "render", "rendered_folder"]

# The kinds of job that `render` redraws, each by its spec's own run function.
RENDERERS = {spec.KIND: spec for spec in (FigureSpec, EpistasisFigureSpec, ClaimsSpec)}
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

# Bounds on what drawing a crate costs. Text is drawn at about 0.2 ms per character, so a spec's
# string is a name or a short title (the longest the workflow writes: a figure's path, under
# 200 characters); a figure's tables hold at most MAX_ROWS rows in all (the paper's largest
# figure table, the spectrum's selected epochs, has about 1.5 million: 5 draws x 5 data seeds x
# 5 seeds x 4 train sizes x 6 methods x 500 epochs) and MAX_COLUMNS columns each.
MAX_TEXT = 1_000
MAX_VALUES = 10_000
MAX_ROWS = 2_000_000
MAX_COLUMNS = 500
MAX_SECONDS = 600  # the whole render (--max-seconds); the tiny run's crate takes under a minute


# Said of a table the metadata describes but the zip lacks.
_LOST = "; its metadata describes it, so the crate lost it. Fix: bundle the run again"


def rendered_folder(crate: str | Path) -> Path:
    """Where ``render`` writes by default: ``<run>-rendered`` beside the crate
    (``results/quick/quick.crate.zip`` -> ``results/quick/quick-rendered``), not the working
    directory, which may be a checkout."""
    crate = Path(crate)
    run = crate.name.removesuffix(".zip").removesuffix(".crate")
    return crate.with_name(f"{run}-rendered")


def render(
    crate: str | Path,
    out: str | Path,
    log=print,
    seconds: float = MAX_SECONDS,
    notice=print,
) -> list[Path]:
    """Rebuild every figure and the claims report of ``crate`` under ``out`` (claims.md,
    claims.json, provenance.tsv and figures/ as in the run folder); returns what it wrote.
    Raises ``CrateError`` (one line) for a crate it cannot render, before writing anything, or
    when rendering takes more than ``seconds`` (the files drawn by then stay, each whole).
    ``notice`` is told of each figure a slim crate keeps as PDF, copied rather than drawn."""
    out = Path(out).resolve()
    with tempfile.TemporaryDirectory() as tmp, _time_bound(seconds, crate):
        opened = open_crate(crate, tmp)
        jobs = _planned(opened, out)
        written = []
        for job_id, spec, tables, copies in jobs:
            if copies:
                written += _copy(copies, notice)
            else:
                written += _draw(opened.name, job_id, spec, tables)
            log(f"rendered {job_id}")
    return written


def _copy(copies: list[tuple[Path, Path, str]], notice) -> list[Path]:
    """Copy each checked member to its place under ``out`` (whole, as a drawing is written),
    saying that it was not drawn."""
    for source, target, why in copies:
        with atomic_path(target) as tmp:
            shutil.copyfile(source, tmp)
        notice(f"{target}: copied from the crate, not redrawn ({why})")
    return [target for _, target, _ in copies]


class _TooLong(BaseException):
    """Raised by the alarm; a BaseException, so that no ``except Exception`` of a drawing
    function swallows it."""


@contextmanager
def _time_bound(seconds: float, crate):
    """Stop the body with a one-line ``CrateError`` after ``seconds`` (in the main thread,
    where an alarm can be set; elsewhere unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _TooLong:
        raise CrateError(
            f"{crate}: rendering took more than {seconds:g} s and was stopped (figures drawn "
            "by then are kept). Fix: for a crate you trust, raise the bound with --max-seconds"
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _planned(opened: OpenedCrate, out: Path) -> list[tuple]:
    """The jobs to draw: (id, spec writing under ``out``, its tables unpacked, the members to
    copy instead of drawing), every one checked before any is drawn."""
    prefix = f"{Layout.RESULTS}/{_run_name(opened)}/"
    absent, cut = left_out(opened), cut_tables(opened)
    gone = {member for member in absent if member not in opened.files}
    plan = opened.json(JOBS)
    if not isinstance(plan, list) or not all(isinstance(entry, dict) for entry in plan):
        raise CrateError(f"{opened.name}: {JOBS} is not a list of jobs")
    jobs, claimed = [], set()
    for entry in plan:
        kind = RENDERERS.get(entry.get("kind"))
        if kind is None:
            continue  # training, aggregation...: their tables are in the crate already
        job_id = str(entry.get("id"))
        where = f"{opened.name}: {JOBS}: job {job_id!r:.80}"
        spec = _spec(kind, entry, prefix, opened, out, where, absent)
        for path in spec.written():  # absolute paths under out
            if path in claimed:
                raise CrateError(f"{where}: writes {path}, which another job writes too")
            claimed.add(path)
        # a figure cannot be drawn from a table cut to what the claims read
        unread = gone | cut if kind is not ClaimsSpec else gone
        tables, missing = _tables(entry, prefix, opened, where, unread)
        copies = _copies(kind, spec, missing, opened, out, where, cut) if missing else []
        jobs.append((job_id, spec, tables, copies))
    if not jobs:
        raise CrateError(f"{opened.name}: {JOBS} names no figure or claims job to render")
    check_replaceable(*sorted(claimed), fix=f"render into a new folder, not {out}")
    return jobs


def _run_name(opened: OpenedCrate) -> str:
    record = opened.json(RECORD)
    name = record.get("run_name") if isinstance(record, dict) else None
    if not isinstance(name, str) or not _RUN_NAME.fullmatch(name):
        raise CrateError(f"{opened.name}: {RECORD} names no run (run_name {name!r:.40})")
    return name


def _member(path, prefix: str, where: str) -> str:
    """The crate member of a run path ``results/<run>/...``, refused unless it stays inside."""
    member = path.removeprefix(prefix) if isinstance(path, str) else None
    if member is None or member == path or safe_member(member) is None:
        raise CrateError(f"{where}: {path!r:.120} is not a path of the run {prefix}")
    return member


def _spec(kind, entry: dict, prefix: str, opened: OpenedCrate, out: Path, where: str, absent: set):
    """The job's spec as its kind checks it, its outputs moved under ``out``; each must be a
    run output the crate holds (or, in a slim crate, says it left out)."""
    spec = entry.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("outputs"), dict):
        raise CrateError(f"{where}: no spec with outputs")
    _check_text(spec, where)
    moved = {
        role: str(out / _member(path, prefix, where)) for role, path in spec["outputs"].items()
    }
    try:
        checked = kind.from_dict({**spec, "outputs": moved}, where)
    except SpecError as err:
        raise CrateError(str(err)) from None
    for path in checked.written():
        member = Path(path).relative_to(out).as_posix()
        if member not in opened.files and member not in absent:
            raise CrateError(f"{where}: writes {member}, which is not a file of the crate")
        if not Path(path).resolve().is_relative_to(out):  # a link in --out pointing away
            raise CrateError(f"{where}: {path} leads outside {out}; nothing was written")
    return checked


def _strings(value):
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _check_text(spec: dict, where: str) -> None:
    """Refuse a spec with a string longer than ``MAX_TEXT`` or more than ``MAX_VALUES``
    strings: drawing text costs time in its length."""
    for count, text in enumerate(_strings(spec), start=1):
        if len(text) > MAX_TEXT:
            raise CrateError(
                f"{where}: its spec holds a string of {len(text):,} characters "
                f"({text[:40]!r}...), more than the {MAX_TEXT:,} a name or title may have"
            )
        if count > MAX_VALUES:
            raise CrateError(f"{where}: its spec holds more than {MAX_VALUES:,} strings")


def _check_size(table: Path, member: str, where: str, rows: int) -> int:
    """The rows of ``table`` added to ``rows``; refused past ``MAX_ROWS`` in all or with more
    than ``MAX_COLUMNS`` columns (read from the Parquet footer: nothing is loaded)."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(table)
    except Exception:  # not Parquet: the drawing says so in one line, as for a broken table
        return rows
    if meta.num_columns > MAX_COLUMNS:
        raise CrateError(
            f"{where}: reads {member}, of {meta.num_columns:,} columns, more than the "
            f"{MAX_COLUMNS:,} a figure's table may have"
        )
    rows += meta.num_rows
    if rows > MAX_ROWS:
        raise CrateError(
            f"{where}: reads {rows:,} rows in all (up to {member}), more than the "
            f"{MAX_ROWS:,} a figure's tables may hold"
        )
    return rows


def _tables(
    entry: dict, prefix: str, opened: OpenedCrate, where: str, unread: set
) -> tuple[list[str], list[str]]:
    """The unpacked tables a job reads (its ``--tables``, each a checked Parquet member) and
    those it cannot read in a slim crate (``unread``: left out, or cut for a figure)."""
    options = entry.get("command_inputs")
    if not isinstance(options, dict) or set(options) != {"--tables"}:
        raise CrateError(f"{where}: its inputs must be --tables only")
    paths = options["--tables"]
    if not isinstance(paths, list) or not paths:
        raise CrateError(f"{where}: --tables names no table")
    tables, missing, rows = [], [], 0
    for path in paths:
        member = _member(path, prefix, where)
        if member.endswith(".parquet") and member in unread:
            missing.append(member)
            continue
        if not member.endswith(".parquet") or member not in opened.files:
            lost = "" if member not in opened.graph else _LOST
            raise CrateError(f"{where}: reads {member}, which is not a table of the crate{lost}")
        rows = _check_size(opened.files[member], member, where, rows)
        tables.append(str(opened.files[member]))
    return tables, missing


def _copies(kind, spec, missing: list[str], opened: OpenedCrate, out: Path, where: str, cut: set):
    """A figure whose tables a slim crate left out, or cut to what the claims read (``cut``):
    its PDF, kept in the crate, copied to its place under ``out`` ([(member file, target,
    why)]); a claims job, or a figure without its PDF, is refused naming the member and the
    fix."""
    fix = (
        "render the run's full crate (whcore bundle results/<run>, without --slim), which holds it"
    )
    kept_cut = missing[0] in cut and missing[0] in opened.files
    how = "cut to the values the claims read in" if kept_cut else "left out of"
    copies = []
    if kind is not ClaimsSpec:  # the claims are always drawn, never copied
        for path in map(Path, spec.written()):
            member = path.relative_to(out).as_posix()
            if member.endswith(COPIED) and member in opened.files:
                why = f"{missing[0]} is {how} this slim crate"
                copies.append((opened.files[member], path, why))
    if not copies:
        raise CrateError(
            f"{where}: reads {missing[0]}, which is {how} this slim crate, and it holds no "
            f"copy of what the job writes. Fix: {fix}"
        )
    return copies


def _draw(name: str, job_id: str, spec, tables: list[str]) -> list[Path]:
    """Run the job's kind's own function on its tables; a table it cannot draw from is a
    broken crate, said in one line."""
    try:
        spec.run(Namespace(tables=tables), Outputs(spec))
    except (FileExistsError, PermissionError):
        raise  # an output that is not ours to replace: the guard's own message
    except Exception as err:  # the crate's tables are untrusted: any failure is the crate's
        detail = str(err).splitlines()[0] if str(err) else ""
        raise CrateError(
            f"{name}: job {job_id!r:.80} cannot be drawn from its tables "
            f"({type(err).__name__}: {detail:.200})"
        ) from None
    return [Path(path) for path in spec.written()]
