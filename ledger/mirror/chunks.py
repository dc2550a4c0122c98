"""What the manifest knows of a big file, stored in chunks so that a write stores what changed.

A file's manifest row (`MirrorFile`) knows its parts (the sha256 of each row's text → the row's key),
the rows ever placed in it, and its pieces (a line per row: `ledger.mirror.pieces`). For the log of
10,000 decisions that is megabytes, of which one write changes a line or two. A column holding more
than `BIG` items keeps, instead of its value, the digests of the chunks the value was cut into
(`{"chunks": [...]}`; in the pieces, in place of their lines); each chunk is a row of `MirrorChunk`,
stored once per file and named by the digest of its text.

A value is cut as lines, one per item, after each line whose row key ends in `ENDING` (and at the
latest after `LONGEST` lines), so a chunk's bounds depend on its own items alone: an item added, removed
or changed changes its own chunk, at most two, wherever it stands, and the other chunks are stored
already.

Rows written whole stay readable: `expand` gives every row its whole values, however they are stored.
`stored` cuts the columns a write changed and stores the chunks the database does not have; `prune`
then removes those the columns no longer name. A crash between the two leaves chunks no column names:
the next `expand` that reads them from the database finds them, and the file's next write removes them.
A column never names a chunk that is not stored. The values a process read or stored last are kept,
under the chunks that name them (`_recent`), for the export after the next write.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Collection, Iterable
from typing import Any

from django.db import connection

from ledger.models import MirrorChunk, MirrorFile

logger = logging.getLogger("canon.mirror")

# A column with more items than this is stored in chunks.
BIG = 200
# A chunk ends after a line whose first field, a row's key, ends so (`decision:1200`: about one row in a
# hundred), or after LONGEST lines.
ENDING = "00"
LONGEST = 1024
# The columns stored in chunks, and the key that names the chunks in their place.
COLUMNS = ("parts", "placed", "pieces")
KEY = "chunks"


def _named(stored: Any) -> list[str] | None:
    """The chunks a stored value names; None when it is a value itself."""
    if isinstance(stored, dict) and set(stored) == {KEY} and isinstance(stored[KEY], list):
        return [str(d) for d in stored[KEY]]
    return None


def _inner(name: str, value: Any) -> Any:
    """What of a column's value is cut into chunks: the pieces' lines; the other columns whole."""
    return value.get("rows") if name == "pieces" and isinstance(value, dict) else value


def _lines(name: str, value: Any) -> str | None:
    """A column's items as lines, one per item (`parts`: the key, a tab, the digest); None when that
    cannot be read back as the same value (an item holding a tab or a line break: never one Canon
    writes), which is then stored whole."""
    inner = _inner(name, value)
    if name == "pieces":
        return inner if isinstance(inner, str) and inner.endswith("\n") else None
    try:
        # A join refuses an item that is not text.
        if name == "parts" and isinstance(inner, dict):
            text, tabs = "\n".join(map("\t".join, zip(inner.values(), inner, strict=True))), len(inner)
        elif name == "placed" and isinstance(inner, list):
            text, tabs = "\n".join(inner), 0
        else:
            return None
    except TypeError:
        return None
    text += "\n" if inner else ""
    # Each line holds its own line break (and, in the parts, its tab): no item holds another.
    return text if text.count("\n") == len(inner) and text.count("\t") == tabs else None


def _cut(text: str) -> list[str]:
    """The texts of the chunks of a column's lines: each ends after a line that `ENDING` marks, or after
    `LONGEST` lines since the last."""
    texts: list[str] = []
    start = 0
    # The first line, then each line after a line break (an alternative of the two is much slower).
    field = rf"[^\t\n]*{ENDING}(?=[\t\n])"
    first = re.match(field, text)
    marks = [first.end()] if first else []
    marks += [m.end() for m in re.finditer("\n" + field, text)]
    for end in [text.index("\n", at) + 1 for at in marks] + [len(text)]:
        while text.count("\n", start, end) > LONGEST:
            at = start
            for _ in range(LONGEST):
                at = text.index("\n", at) + 1
            texts.append(text[start:at])
            start = at
        if end > start:
            texts.append(text[start:end])
            start = end
    return texts


def _joined(name: str, texts: list[str]) -> Any:
    text = "".join(texts)
    if name == "pieces":
        return text
    lines = text.split("\n")[:-1]
    if name == "parts":
        return {digest: key for key, digest in (line.split("\t", 1) for line in lines)}
    return lines


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _known(row: MirrorFile) -> dict[str, list[str]]:
    """The chunks each column of `row` names in the database, as `expand` or `stored` left them."""
    found: dict[str, list[str]] = row.__dict__.setdefault("_chunks", {})
    return found


def _texts(row: MirrorFile) -> dict[str, str]:
    """The digests of the chunks `expand` read, by their text: a chunk cut again is not hashed again."""
    found: dict[str, str] = row.__dict__.setdefault("_chunk_texts", {})
    return found


def _count(name: str, value: Any) -> int:
    inner = _inner(name, value)
    if name == "pieces":
        return inner.count("\n") if isinstance(inner, str) else 0
    return 0 if _named(inner) is not None else len(inner) if isinstance(inner, dict | list) else 0


def big(row: MirrorFile) -> bool:
    """Whether `row`, with the values a write gives it, is stored through `stored`: when a column holds
    many items, or names chunks in the database."""
    return bool(_known(row)) or any(_count(name, getattr(row, name)) > BIG for name in COLUMNS)


# The values this process last read or stored, by file, column and chunks (which name their text
# exactly, so a value found here is the one the database holds), with the digests of their chunks: the
# export after the next write starts from them instead of reading megabytes again.
_recent: OrderedDict[tuple[int, str, tuple[str, ...]], tuple[Any, dict[str, str]]] = OrderedDict()
RECENT = 32


def _copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


_recent_lock = threading.Lock()
# The files whose chunks this process found some that no column names (`expand`): `prune` removes them.
_unnamed: set[int] = set()


def _remember(pk: int, name: str, chunks: list[str], value: Any, texts: dict[str, str]) -> None:
    key = (pk, name, tuple(chunks))
    with _recent_lock:
        _recent[key] = (_copy(_inner(name, value)), texts)
        _recent.move_to_end(key)
        while len(_recent) > RECENT:
            _recent.popitem(last=False)


def _recalled(pk: int, name: str, chunks: list[str]) -> tuple[Any, dict[str, str]] | None:
    with _recent_lock:
        return _recent.get((pk, name, tuple(chunks)))


def expand(rows: Collection[MirrorFile]) -> None:
    """Give each row's columns their whole values, from the chunks they name (one query for all, of
    those this process does not hold already)."""
    named = {
        row.pk: {
            name: chunks
            for name in COLUMNS
            if (chunks := _named(_inner(name, getattr(row, name)))) is not None
        }
        for row in rows
    }
    named = {pk: columns for pk, columns in named.items() if columns}
    if not named:
        return
    recalled = {(pk, n): _recalled(pk, n, c) for pk, columns in named.items() for n, c in columns.items()}
    wanted = {pk for (pk, _), held in recalled.items() if held is None}
    texts: dict[int, dict[str, str]] = defaultdict(dict)
    found = MirrorChunk.objects.filter(file_id__in=sorted(wanted)).values_list("file_id", "digest", "text")
    for file_id, digest, text in found.iterator(chunk_size=500) if wanted else ():
        texts[file_id][digest] = text
    for row in rows:
        # Chunks no column names, left by a write that stopped: the next `prune` removes them.
        if row.pk in texts and set(texts[row.pk]) - {d for c in named[row.pk].values() for d in c}:
            with _recent_lock:
                _unnamed.add(row.pk)
        for name, chunks in named.get(row.pk, {}).items():
            held = recalled[row.pk, name]
            if held is not None:
                value, hashed = _copy(held[0]), held[1]
            else:
                have = texts[row.pk]
                try:
                    value = _joined(name, [have[d] for d in chunks])
                except (KeyError, ValueError):
                    # Never left by Canon (a column names a chunk only once it is stored): read as unknown.
                    logger.warning(
                        "manifest row %s (%s) names a %s chunk that is missing", row.pk, row.path, name
                    )
                    setattr(row, name, MirrorFile._meta.get_field(name).get_default())  # type: ignore[union-attr]
                    continue
                hashed = {have[d]: d for d in chunks}
                _remember(row.pk, name, chunks, value, hashed)
            if name == "pieces":
                value = {**getattr(row, name), "rows": value}
            setattr(row, name, value)
            _known(row)[name] = chunks
            _texts(row).update(hashed)


def stored(
    row: MirrorFile, changed: Iterable[str], *, into: dict[tuple[int, str], str] | None = None
) -> dict[str, Any]:
    """What to store in the columns of `row` (a stored row, its values whole) that a write `changed`, and
    in those that hold a big value whole: the value itself when it holds few items, else the digests
    of its chunks, after storing the chunks the file lacks (or, given `into`, once the caller stored
    those it gathers there, by file and digest)."""
    known = _known(row)
    have = {d for chunks in known.values() for d in chunks}
    names = set(changed) | {n for n in COLUMNS if n not in known and _count(n, getattr(row, n)) > BIG}
    out: dict[str, Any] = {}
    new: dict[str, str] = {}
    hashed = _texts(row)
    for name in sorted(names):
        value = getattr(row, name)
        lines = _lines(name, value) if _count(name, value) > BIG else None
        before = known.pop(name, [])
        if lines is None:
            out[name] = value
            _dropped(row).update(before)
            continue
        texts = _cut(lines)
        digests = [hashed.get(text) or _digest(text) for text in texts]
        _dropped(row).update(set(before) - set(digests))
        new.update((d, t) for d, t in zip(digests, texts, strict=True) if d not in have)
        hashed.update(zip(texts, digests, strict=True))
        _remember(row.pk, name, digests, value, dict(zip(texts, digests, strict=True)))
        out[name] = {**value, "rows": {KEY: digests}} if name == "pieces" else {KEY: digests}
        known[name] = digests
    if into is None:
        _insert([(row.pk, digest, text) for digest, text in new.items()])
    else:
        into.update(((row.pk, digest), text) for digest, text in new.items())
    return out


# Chunks sent in one statement.
_PER_STATEMENT = 100


def _insert(found: list[tuple[int, str, str]]) -> None:
    """Store these chunks (file, digest, text), those a file has already left as they are. As values of
    their own, not arrays: quoting megabytes of text inside an array costs more than sending them."""
    table = MirrorChunk._meta.db_table
    with connection.cursor() as cursor:
        for start in range(0, len(found), _PER_STATEMENT):
            batch = found[start : start + _PER_STATEMENT]
            values = ", ".join(["(%s, %s, %s)"] * len(batch))
            cursor.execute(
                f"INSERT INTO {table} (file_id, digest, text) VALUES {values}"
                " ON CONFLICT (file_id, digest) DO NOTHING",
                [value for chunk in batch for value in chunk],
            )


def _dropped(row: MirrorFile) -> set[str]:
    """The chunks of `row`'s file its columns named before `stored` and no longer do."""
    found: set[str] = row.__dict__.setdefault("_chunks_dropped", set())
    return found


def prune(row: MirrorFile) -> None:
    """Remove the chunks of `row`'s file that its columns no longer name (`stored`); all that none of
    them names, when `expand` found such chunks (left by a write that stopped between the two)."""
    named = {d for chunks in _known(row).values() for d in chunks}
    for name in COLUMNS:
        named.update(_named(_inner(name, getattr(row, name))) or [])
    chunks = MirrorChunk.objects.filter(file_id=row.pk)
    with _recent_lock:
        unnamed = row.pk in _unnamed
        _unnamed.discard(row.pk)
    if unnamed:
        chunks.exclude(digest__in=sorted(named)).delete()
    elif dropped := sorted(_dropped(row) - named):
        chunks.filter(digest__in=dropped).delete()
    _dropped(row).clear()


def _ids(rows: list[MirrorFile]) -> None:
    """Give the rows stored without an id theirs (an upsert gives none, `manifest.store`); a row never
    stored (made by `manifest.entry` under the project's lock) has none to find."""
    lacking = [row for row in rows if row.pk is None and not row._state.adding]
    if not lacking:
        return
    paths = [row.path for row in lacking]
    ids = dict(
        MirrorFile.objects.filter(project_id=lacking[0].project_id, path__in=paths).values_list("path", "pk")
    )
    for row in lacking:
        row.pk = ids.get(row.path)
        row._state.adding = row.pk is None


def save_many(rows: list[MirrorFile], store: Callable[[list[MirrorFile]], None]) -> None:
    """Save rows whole (new, stored or not) by `store`, their big columns in chunks, in a few statements
    for all (the files a first export writes): those not stored yet that hold a big value first without
    their big values (their chunks need their ids), then the chunks, then the rows, each holding its
    chunks' digests in place of its values."""
    whole = [{name: getattr(row, name) for name in COLUMNS} for row in rows]
    try:
        _ids(rows)
        # A new row with no big value has no chunks to store: it is stored once, with its values.
        if unstored := [row for row in rows if row.pk is None and big(row)]:
            for row in unstored:
                for name in COLUMNS:
                    setattr(row, name, MirrorFile._meta.get_field(name).get_default())  # type: ignore[union-attr]
            store(unstored)
            _ids(unstored)
        new: dict[tuple[int, str], str] = {}
        for row, values in zip(rows, whole, strict=True):
            for name, value in values.items():
                setattr(row, name, value)
            for name, value in stored(row, COLUMNS, into=new).items():
                setattr(row, name, value)
        _insert([(file_id, digest, text) for (file_id, digest), text in new.items()])
        store(rows)
    finally:
        for row, values in zip(rows, whole, strict=True):
            for name, value in values.items():
                setattr(row, name, value)
    for row in rows:
        prune(row)


def save(row: MirrorFile) -> None:
    """Save `row` whole (new, stored or not) by Django's own save, its big columns in chunks."""
    save_many([row], lambda rows: rows[0].save())
