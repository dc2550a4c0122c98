"""Squad's own file formats, read losslessly and written in the team's style. Pure functions, no database.

One module per format (`decisions`, `history`, `inbox`, `frontmatter`), on the line machinery they share
(`lines`, `dates`, `headings`); this package names what the rest of Canon uses.

- `decisions.md`: `parse_decisions` splits the log into the decisions a person sees there (`Block`s) and
  the verbatim `Text` between them, each with its reason; `render_block` writes a new block the way
  Squad's Scribe does, so that Squad's own readers see one decision in it.
- `agents/{name}/history.md`: `parse_history` splits an agent's memory into `Entry`s and `Text`;
  `render_entry` and `render_section_heading` write new ones.
- `decisions/inbox/*.md`: `parse_native_proposal` reads the shapes without front matter (Squad's own,
  people's, and Canon's own files, which `render_proposal` writes in `squad_decide`'s shape);
  `parse_squad_memory` reads the front matter files `squad memory write --class DECISION` writes.
- Front matter (inbox files that have it, `identity/now.md`): `split_front_matter`, `load_yaml`, `render_now`.

Every parser is lossless: joining the `text` of the parts it returns gives back its input exactly, for any
string (CRLF, a byte-order mark, no final newline, odd Unicode). Only `\\n` ends a line; a `\\r` before it
stays with the line's ending. Parsing is linear in the size of the input.
"""

from ledger.mirror.squad.dates import parse_date
from ledger.mirror.squad.decisions import (
    DECISION_TYPES,
    Block,
    newest_first,
    parse_decisions,
    render_block,
    uses_separators,
)
from ledger.mirror.squad.frontmatter import FrontMatterError, load_yaml, render_now, split_front_matter
from ledger.mirror.squad.history import (
    SECTION_FOR_TYPE,
    SECTION_TYPES,
    Entry,
    parse_history,
    render_entry,
    render_section_heading,
)
from ledger.mirror.squad.inbox import (
    ENTRY_TYPES,
    IMPORTANCE_LEVELS,
    Proposal,
    parse_native_proposal,
    parse_squad_memory,
    render_proposal,
    slug_from_filename,
)
from ledger.mirror.squad.lines import CONTROL, Text, without_controls

__all__ = [
    "CONTROL",
    "DECISION_TYPES",
    "ENTRY_TYPES",
    "IMPORTANCE_LEVELS",
    "SECTION_FOR_TYPE",
    "SECTION_TYPES",
    "Block",
    "Entry",
    "FrontMatterError",
    "Proposal",
    "Text",
    "load_yaml",
    "newest_first",
    "parse_date",
    "parse_decisions",
    "parse_history",
    "parse_native_proposal",
    "parse_squad_memory",
    "render_block",
    "render_entry",
    "render_now",
    "render_proposal",
    "render_section_heading",
    "slug_from_filename",
    "split_front_matter",
    "uses_separators",
    "without_controls",
]
