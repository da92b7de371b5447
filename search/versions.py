"""Versions a question names, and versions a file's path names (`Alamofire 5.0 Migration
Guide.md`, `docs/manual/v1.8/`, `UPGRADE-3.0.md`): a question about one version is
answered by that version's page, not by the other versions' pages beside it
(`search.hybrid.rerank` promotes the one and demotes the others; a path naming no version
is left alone).

- In a question (`query_versions`): a number with dots (`1.19`, `3.1.0`), one written
  `v2` / `version 2` / `release 3`, or a number of one or two digits after a capitalised
  name (`Alamofire 5`, `Python 3`), and the end of a range after one ("from Guzzle 6 to
  7"); not a count or a status code ("the first 3 results", "return 404").
- In a path (`path_versions`): a number with dots, or `v` and a number, standing apart
  (not inside a name: `http2.py`, `base64.c`, `py310` name no version).
- They match when one's numbers begin with the other's (`5` and `5.0`, `1.19` and
  `1.19.2`).
- A version is a release's only when no path of code among the candidates names it
  (`release_versions`): `presenter/v3/` is an API's version 3, and only pages (release
  notes, migration guides, a manual's versions) are moved by it (`search.hybrid`).

Pure: strings in, numbers out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["matches", "path_versions", "query_versions", "release_versions", "version_match"]

Version = tuple[int, ...]

_DOTTED = r"\d{1,4}(?:\.\d{1,4})+"
_QUERY = re.compile(
    rf"(?<![\w.])(?:({_DOTTED})|[vV](\d{{1,3}})|(?:version|release|v\.) ?(\d{{1,3}}))"
    r"(?:\.x)?(?![\w]|\.\d)", re.IGNORECASE)
"""A version in a question: dotted, `v2`, `version 2`, `release 3`."""
_NAME_THEN_NUMBER = re.compile(r"(?<![\w.])([A-Z][\w.+#-]{1,30}) (\d{1,2})(?![\w]|\.\d)")
"""A number of one or two digits after a word starting with a capital (`Alamofire 5`)."""
_RANGE_END = re.compile(r"(?<=\d) (?:to|and|or|->) v?(\d{1,4}(?:\.\d{1,4})*)(?![\w]|\.\d)",
                        re.IGNORECASE)
"""The second version of a range, once a first one is named ("from Guzzle 6 to 7")."""
_PATH = re.compile(rf"(?<![A-Za-z0-9])(?:({_DOTTED})|[vV](\d{{1,3}}(?:\.\d{{1,4}})*))"
                   r"(?![0-9])")


def _parts(text: str) -> Version:
    return tuple(int(p) for p in text.split("."))


@lru_cache(maxsize=1024)
def query_versions(query: str) -> tuple[Version, ...]:
    """The versions `query` names (module docstring), in order, without repeats."""
    out: dict[Version, None] = {}
    for m in _QUERY.finditer(query):
        text = m.group(1) or m.group(2) or m.group(3)
        if text:
            out.setdefault(_parts(text), None)
    for m in _NAME_THEN_NUMBER.finditer(query):
        out.setdefault(_parts(m.group(2)), None)
    if out:  # "from Guzzle 6 to 7", "between 1.2 and 1.4"
        for m in _RANGE_END.finditer(query):
            out.setdefault(_parts(m.group(1)), None)
    return tuple(out)


@lru_cache(maxsize=8192)
def path_versions(path: str) -> tuple[Version, ...]:
    """The versions a path names (module docstring)."""
    return tuple(_parts(m.group(1) or m.group(2)) for m in _PATH.finditer(path))


def release_versions(wanted: tuple[Version, ...], code_paths: Iterable[str]
                     ) -> tuple[Version, ...]:
    """The versions of `wanted` that no path of code in `code_paths` names: a version
    that is a folder or a file of the code (`presenter/v3/article.go`, `api/v2/`) is an
    API's version ("versioned responses with v1, v2 and v3 presenters"), not one of the
    project's releases, whose pages the question would ask for."""
    if not wanted:
        return wanted
    named = {v for path in code_paths for v in path_versions(path)}
    if not named:
        return wanted
    return tuple(w for w in wanted if not any(matches(w, v) for v in named))


def matches(a: Version, b: Version) -> bool:
    """One version's numbers begin with the other's (`5` and `5.0`)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def version_match(wanted: tuple[Version, ...], path: str) -> bool | None:
    """Whether `path` names a version the question names (`wanted`): True, False (it
    names only others), or None (the question names none, or the path names none)."""
    if not wanted:
        return None
    named = path_versions(path)
    if not named:
        return None
    return any(matches(w, v) for w in wanted for v in named)
