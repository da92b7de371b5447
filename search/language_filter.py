"""A `--lang` / `language` filter as every search mode reads it.

`language_filter(name)` turns what a user typed (`js`, `Python`, `golang`, `C++`) into the
language id the index stores (`files.language`: `javascript`, `python`, `go`, `cpp`), so
that the default (hybrid), semantic, keyword and lexical modes, `refs` and the MCP tools
filter on the same files; a name that is no language is a `ValidationError` naming the
field, the value, the closest names and every valid one, instead of an empty answer.

Pure (the language table of `indexer.chunk.languages`). Called by the search use cases.
"""

from __future__ import annotations

import difflib

from ctxd.indexer.chunk.languages import ALIASES, LANGUAGES, normalize_language
from ctxd.indexer.errors import ValidationError

__all__ = ["language_filter"]


def language_filter(name: str | None, field: str = "language") -> str | None:
    """The language id for `name` (None stays None: no filter).

    Raises:
        ValidationError: `name` is no language id, alias or display name.
    """
    if name is None:
        return None
    found = normalize_language(name)
    if found is not None:
        return found
    valid = sorted(LANGUAGES)
    known = [*valid, *ALIASES, *(i.display.lower() for i in LANGUAGES.values())]
    close = difflib.get_close_matches(name.strip().lower(), known, n=3, cutoff=0.6)
    near = (f"Did you mean {', '.join(repr(c) for c in dict.fromkeys(close))}? "
            if close else "")
    raise ValidationError(
        f"unknown {field} {name!r}: not a language name or alias",
        hint=f"{near}Use a language name or alias (e.g. python, js, go); valid names: "
             f"{', '.join(valid)}.",
        details={"field": field, "value": name, "allowed": valid},
    )
