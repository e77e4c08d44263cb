"""A slim crate (``whcore bundle --slim``): the run's crate without what makes it large, still
rendering the same claims.

A run's crate is large where a table holds a row per epoch (the faithful run's spectrum heatmap,
a row per epoch and 2^n columns, is 72 MB of its 101 MB) and in its figures. A slim crate keeps
every table a claims job reads, so ``whcore render`` writes the same claims; it leaves out

- every table that no claims job reads and that holds a row per epoch (an ``epoch`` column),
  and keeps the PDF of each figure drawn from such a table (``render`` copies it and says so: it
  cannot redraw it; the PDF, not the PNG: several times smaller for every such figure measured);
- every other figure (PDF and PNG): ``render`` redraws it from the tables the crate keeps.

The tables it keeps are re-encoded losslessly (``reencode``: zstd, and byte-stream-split for
floating-point columns, which snappy barely compresses; a third smaller for the per-epoch
spectrum table): the same schema, metadata, rows and values, checked as they are written.

A table whose reads the claims engine states value by value (``claims.CLAIM_READS``: the
per-epoch spectrum table, which the curve claims read and which is most of a slim crate
otherwise) is cut to them (``cut``): the rows no claim reads are dropped and the values no claim
reads are null, so the claims are the same and the table several times smaller. A figure drawn
from a cut table is not redrawn: its PDF is kept, as for a table left out.

Its metadata says so: the entity ``SLIM`` (which the root dataset mentions) lists what was left
out, each as a contextual entity ``#left-out/<member>`` with the sha256 and size the run's file
has and why, and mentions each cut table; a re-encoded or cut table's File names the sha256 and
size of the run's file. Everything else (claims, provenance, configuration, the plan, the
environment, the code, every action) is as in the full crate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..claims import CLAIM_READS
from ..jobs.claims import ClaimsSpec
from ..jobs.epistasis_figure import EpistasisFigureSpec
from ..jobs.figure import FigureSpec
from .open import CrateError, OpenedCrate, safe_member

__all__ = [
    "LEFT_OUT",
    "SLIM",
    "Slim",
    "cut",
    "cut_tables",
    "describe_slim",
    "left_out",
    "reencode",
    "slim_crate_path",
    "slim_selection",
]

SLIM = "#slim"  # the entity that marks a crate slim and lists what it left out
LEFT_OUT = "#left-out/"  # + member: a file of the run that a slim crate left out
FIGURE_KINDS = (FigureSpec.KIND, EpistasisFigureSpec.KIND)
COPIED = ".pdf"  # what a slim crate keeps of a figure it cannot redraw

REDRAWN = "left out of this slim crate: whcore render redraws it from the crate's tables"
PER_EPOCH = (
    "left out of this slim crate: no claim reads it and it holds a row per epoch; the crate "
    "keeps the PDF of each figure drawn from it"
)
NOT_REDRAWN = (
    "left out of this slim crate: its figure's table is left out or cut to what the claims "
    "read, so the crate keeps the figure's PDF only"
)


def slim_crate_path(root: str | Path) -> Path:
    """``results/<run>/<run>.slim.crate.zip``: beside the full crate, not over it."""
    root = Path(root)
    return root / f"{root.name}.slim.crate.zip"


@dataclass(frozen=True)
class Slim:
    """What a slim crate leaves out (run path -> why), the figures it keeps as PDF only and the
    tables it cuts to what the claims read (run path -> the reads, ``claims.CLAIM_READS``)."""

    left_out: dict[str, str]
    copied: tuple[str, ...]
    cut: dict = field(default_factory=dict)


def _tables_of(entry: dict) -> list[str]:
    return list(entry.get("command_inputs", {}).get("--tables", []))


def _per_epoch(path: Path) -> bool:
    """Whether the table ``path`` holds a row per epoch (read from its Parquet footer)."""
    import pyarrow.parquet as pq

    return "epoch" in pq.read_schema(path).names


def slim_selection(plan: list[dict], targets: list[str], workdir: Path) -> Slim:
    """What the slim crate of the run leaves out, from its ``plan`` (``bundle._plan``) and
    ``targets`` (run paths, relative to ``workdir``)."""
    read_by_claims = {
        path for entry in plan if entry["kind"] == ClaimsSpec.KIND for path in _tables_of(entry)
    }
    left_out = {
        path: PER_EPOCH
        for path in targets
        if path.endswith(".parquet") and path not in read_by_claims and _per_epoch(workdir / path)
    }
    cut = {path: CLAIM_READS[Path(path).stem] for path in read_by_claims if _cuts(path)}
    copied = []
    for entry in plan:
        if entry["kind"] not in FIGURE_KINDS:
            continue
        redrawn = not any(path in left_out or path in cut for path in _tables_of(entry))
        for path in entry["outputs"]:
            if redrawn:
                left_out[path] = REDRAWN
            elif path.endswith(COPIED):
                copied.append(path)
            else:
                left_out[path] = NOT_REDRAWN
    return Slim(left_out, tuple(copied), cut)


def _cuts(path: str) -> bool:
    return path.endswith(".parquet") and Path(path).stem in CLAIM_READS


def describe_slim(crate, slim: Slim, files: dict, facts, prefix: str) -> None:
    """Add to ``crate`` the entities of what ``slim`` leaves out, each with ``facts(path)``
    (its sha256 and size), into ``files`` (run path -> the crate's entity), and the ``SLIM``
    entity listing them."""
    from rocrate.model.contextentity import ContextEntity

    parts = []
    for path, why in sorted(slim.left_out.items()):
        member = path.removeprefix(prefix)
        files[path] = crate.add(
            ContextEntity(
                crate,
                f"{LEFT_OUT}{member}",
                properties={
                    "@type": "CreativeWork",
                    "name": member,
                    "description": why,
                    **facts(path),
                },
            )
        )
        parts.append(files[path])
    copied = ", ".join(path.removeprefix(prefix) for path in slim.copied) or "none"
    marker = crate.add(
        ContextEntity(
            crate,
            SLIM,
            properties={
                "@type": "CreativeWork",
                "name": "slim crate",
                "description": (
                    f"A slim crate (whcore bundle --slim): {len(parts)} file(s) of the run left "
                    "out, each listed here with its sha256 and why. It keeps every table a "
                    "claim reads (re-encoded losslessly; those it mentions cut to the values "
                    "the claims read), so whcore render writes the same claims; render redraws "
                    "the figures it can from the tables kept whole and copies "
                    f"the PDF of those it cannot ({copied}). The full crate: whcore bundle "
                    "without --slim."
                ),
                "hasPart": [{"@id": part.id} for part in parts],
                "mentions": [{"@id": files[path].id} for path in sorted(slim.cut)],
            },
        )
    )
    crate.root_dataset.append_to("mentions", marker)
    crate.description = (
        f"{crate.description} A slim crate: it leaves out {len(parts)} file(s) of the run, "
        f"listed by {SLIM}."
    )


def reencode(source: Path, target: Path) -> str:
    """Write the Parquet table ``source`` to ``target`` re-encoded losslessly (see the module's
    description); returns how, for its File's description. Raises ``ValueError`` if the table
    read back differs from ``source``'s in anything."""
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    _write(table, target)
    if not _same(pq.read_table(target), table):
        raise ValueError(f"{source}: re-encoding the table changed it; bundle it without --slim")
    return (
        "the run's table re-encoded losslessly for the slim crate (Parquet, zstd, "
        "byte-stream-split floating-point columns): the same schema, metadata, rows and values"
    )


def cut(source: Path, target: Path, reads) -> str:
    """Write the Parquet table ``source`` to ``target`` cut to what ``reads`` (a table's
    reads, ``claims.CLAIM_READS``) says the claims read: its rows with a value read, each other
    value null, re-encoded as ``reencode`` does; returns how, for its File's description.
    Raises ``ValueError`` unless the table read back is the cut table, with ``source``'s schema
    and metadata."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    read = reads(table.to_pandas())
    rows = read.to_numpy(dtype=bool).any(axis=1)
    kept = table.filter(pa.array(rows))
    for name in read.columns:
        index = kept.schema.get_field_index(name)
        mask = pa.array(read[name].to_numpy(dtype=bool)[rows])
        nulls = pa.nulls(len(kept), kept.schema.field(index).type)
        kept = kept.set_column(index, kept.schema.field(index), pc.if_else(mask, kept[name], nulls))
    _write(kept, target)
    again = pq.read_table(target)
    if not _same(again, kept) or not again.schema.equals(table.schema, check_metadata=True):
        raise ValueError(f"{source}: cutting the table changed what the claims read")
    values = int(read.to_numpy(dtype=bool).sum())
    return (
        "the run's table cut to the values the claims read, for the slim crate: "
        f"{int(rows.sum()):,} of its {len(table):,} rows, {values:,} of its "
        f"{read.size:,} values in the columns the claims may read, every other value null "
        f"({len(read.columns)} columns; the keys whole); Parquet, zstd, byte-stream-split "
        "floating-point columns"
    )


def _write(table, target: Path) -> None:
    """``table`` as Parquet: zstd, byte-stream-split floating-point columns (which snappy
    barely compresses), dictionaries for the others."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    floats = [field.name for field in table.schema if pa.types.is_floating(field.type)]
    others = [name for name in table.column_names if name not in floats]
    pq.write_table(
        table,
        target,
        compression="zstd",
        use_byte_stream_split=floats or False,
        use_dictionary=others or False,
    )


def _same(again, table) -> bool:
    """Whether two tables have the same schema, metadata, rows and values."""
    same_schema = again.schema.equals(table.schema, check_metadata=True)
    return same_schema and again.to_pandas().equals(table.to_pandas())


def cut_tables(opened: OpenedCrate) -> set[str]:
    """The members the slim crate ``opened`` says it cut to what the claims read; none for a
    full crate. The names are untrusted: each must be a member path inside the crate."""
    marker = opened.graph.get(SLIM)
    return _members(opened, marker.get("mentions", []), "") if isinstance(marker, dict) else set()


def left_out(opened: OpenedCrate) -> set[str]:
    """The members the slim crate ``opened`` says it left out; none for a full crate. The
    names are untrusted: each must be a member path inside the crate."""
    marker = opened.graph.get(SLIM)
    if marker is None:
        return set()
    parts = marker.get("hasPart", []) if isinstance(marker, dict) else None
    return _members(opened, parts, LEFT_OUT)


def _members(opened: OpenedCrate, parts, prefix: str) -> set[str]:
    """The member paths named by ``parts`` (a JSON-LD reference or a list of them), each id
    ``prefix`` + a member path inside the crate; anything else is refused."""
    parts = parts if isinstance(parts, list) else [parts]
    members = set()
    for part in parts:
        identifier = part.get("@id") if isinstance(part, dict) else None
        member = identifier.removeprefix(prefix) if isinstance(identifier, str) else None
        if member is None or (prefix and member == identifier) or safe_member(member) is None:
            raise CrateError(f"{opened.name}: {SLIM} lists {identifier!r:.120}, not a member path")
        members.add(member)
    return members
