"""PostgreSQL: the full-text index reads every `<` in the text with a space after it, as no tag.

PostgreSQL's default parser reads `<` as the start of an XML or HTML tag and drops the tag: `<img
src=a>` leaves nothing, `Vec<String>` loses `string`, and after `<script` or `<style` it drops the rest
of the text (`to_tsvector('english', '<script redis')` is empty). SQLite's tokenizer reads `<` as a
space, so a decision or a memory that said `<script` was found on SQLite and hidden on PostgreSQL. With
a space after each `<` the parser sees no tag, and indexes the words around it as SQLite does
(`Vec< String>` is `vec` and `string`).

Each table's generated `search_vector` is dropped and created again, its text columns read through
`replace(…, '<', '< ')`; the rest is as 0007, 0008 and 0010 built it (weights, the scope words), and its
GIN index again takes each write at once (0012). The query must be read with the same replace
(`ledger.search`, `ledger.context`). SQLite: nothing changes.
"""

import re
from importlib import import_module

from django.db import migrations

# The earlier migrations, whose module names are not identifiers an import statement can spell.
fts = import_module("ledger.migrations.0007_full_text_search")
episodes = import_module("ledger.migrations.0008_episodes")
scope = import_module("ledger.migrations.0010_search_scope")
pending = import_module("ledger.migrations.0012_search_without_pending_list")

# A text column as 0007 and 0008 read it into a vector.
COLUMN = re.compile(r"coalesce\(([\w:]+), ''\)")


def scoped(vector: str, words) -> str:
    """`vector` with the scope words of 0010 (`words`: its expression over the row)."""
    return f"{vector} || setweight(to_tsvector('simple'::regconfig, {words()}), 'D')"


def spaced(vector: str, columns: list[str]) -> str:
    """`vector` with a space after every `<` of each of its text columns (`columns`)."""
    vector, found = COLUMN.subn(r"replace(coalesce(\1, ''), '<', '< ')", vector)
    assert found == len(columns), vector
    return vector


# table: (its text columns, its vector as 0015 leaves it)
PREVIOUS = {table: (columns, vector) for table, _, columns, vector in fts.INDEXES}
PREVIOUS["ledger_episode"] = (episodes.COLUMNS, episodes.VECTOR)
for table, _, columns, words, _, vector in scope.SCOPED:
    PREVIOUS[table] = (columns, scoped(vector, words))

VECTORS = {table: spaced(vector, columns) for table, (columns, vector) in PREVIOUS.items()}


def _rebuild(apps, schema_editor, vectors: dict[str, str]) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, vector in vectors.items():
        fts._run(schema_editor, fts._postgresql_backward(table))
        fts._run(schema_editor, fts._postgresql_forward(table, vector))
    pending.forward(apps, schema_editor)


def forward(apps, schema_editor):
    _rebuild(apps, schema_editor, VECTORS)


def backward(apps, schema_editor):
    _rebuild(apps, schema_editor, {table: vector for table, (_, vector) in PREVIOUS.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0015_session_authors"),
    ]

    operations = [migrations.RunPython(forward, backward)]
