"""Build output: copies of a project's source that a build wrote, recognised by place and text.

A bundle or a compiled copy answers every question its source answers, in longer and
worse words; `indexer.walk.textclass` keeps what this module recognises greppable but out
of the embeddings (`Role.BUILT`). Two parts:

- `BuildDirs(root).built(rel)`: by place, with a few cached `stat`s and directory
  listings per repository: a file under `*.egg-info/` or `*.dist-info/`, or under a
  `*.docset/` (a documentation generator's copy of its site for Dash); Python's
  `build/lib/` (`build/lib.<platform>/`, `build/bdist.*/`) beside a `setup.py`,
  `pyproject.toml` or `setup.cfg`, or mirroring the project's own modules; a `dist/`,
  `build/` or `out/` folder that the `package.json` beside it names (`main`, `module`,
  `exports`, `browser`, `files`, `types`, `bin`, `unpkg`, ...), or that sits beside a
  `src/` holding a file of the same name (`dist/esm/index.js` for `src/index.ts`); a file
  with a source map beside it (`app.js` and `app.js.map`).
- `bundle_signature(rel, text)`: by text, looking only at the first `HEAD` and the last
  `TAIL` characters: a trailing `sourceMappingURL` comment (any file outside the folders
  of hand-written source, `SOURCE_DIR_NAMES`: there, only an inline map); in JavaScript and
  CSS files, a bundle banner (`/*! name vX.Y.Z`, webpack's `/*! For license information`,
  rollup's `/**` comment holding only `name vX.Y.Z` on its first line, then a copyright)
  or a bundler's runtime (webpack, Parcel, esbuild, browserify, a UMD wrapper as rollup
  and webpack write it, TypeScript's and Babel's CommonJS helpers); in HTML files, a
  documentation generator's mark (`_GENERATED_HTML`: jazzy, javadoc, rustdoc, Sphinx, ...).

A hand-written file rarely ends with a `sourceMappingURL` or opens with `/*! name v1.2.3`
(but one line added to `src/app.js` must not take it out of semantic search, issue 39);
folders named `build/` that hold a project's build *scripts* stay embedded, since no
`package.json` names them and `src/` holds no file of their names.

Invariants: `built` never reads a file other
than a `package.json` (at most `PACKAGE_JSON_MAX` bytes, once per folder); a missing or
broken `package.json` names nothing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ctxd.indexer.walk.safeopen import read_regular

__all__ = ["BUILD_DIR_NAMES", "BuildDirs", "bundle_signature"]

BUILD_DIR_NAMES = frozenset({"dist", "build", "out"})
"""Folders a build writes to, when a `package.json` names them or they mirror `src/`."""
_PYTHON_BUILD = re.compile(r"lib|lib\..+|bdist\..+")
_PYTHON_MARKERS = ("setup.py", "pyproject.toml", "setup.cfg")
_METADATA_SUFFIXES = (".egg-info", ".dist-info")
_PACKAGE_FIELDS = ("main", "module", "browser", "exports", "files", "types", "typings",
                   "bin", "unpkg", "jsdelivr", "style", "svelte", "es2015", "esnext")
PACKAGE_JSON_MAX = 1_048_576
"""A larger `package.json` is not read (names nothing)."""
_WEB_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".css")

HEAD = 8192
"""Characters at the start of a file that the text rules look at."""
TAIL = 1024
"""Characters at the end of a file that the text rules look at."""

_SOURCE_MAP = re.compile(
    r"(?:^|\n)[ \t]*(?://|/\*)[#@][ \t]*sourceMappingURL=(?P<url>\S+)[^\n]*\s*\Z")
SOURCE_DIR_NAMES = frozenset({"src", "source", "sources", "app", "components", "pages"})
"""Folders of hand-written source: a trailing `sourceMappingURL` comment (one line anyone
can add) does not make a file there build output, unless the map is inline (`data:`, as
compilers write it); a bundle's banner or runtime still does."""
_BANNER = re.compile(
    r"\A\s*/\*!\s*(?:\*\s*)?(?:@license\s+)?(?P<name>@?[A-Za-z][\w@./-]*(?:[ \t]+[A-Za-z]"
    r"[\w@./-]*){0,3})[ \t]+v?\d+\.\d+\.\d+|\A\s*/\*! For license information please see")
_DOC_BANNER = re.compile(
    r"\A\s*/\*\*[ \t]*\n[ \t]*\*?[ \t]*(?P<name>@?[A-Za-z][\w@./-]*)[ \t]+v\d+\.\d+\.\d+"
    r"[\w.+-]*[ \t]*\n(?P<rest>(?:[ \t]*\*(?!/)[^\n]*\n){0,8})")
"""Rollup's `/**\n* vue v3.5.45\n* (c) ... @license MIT\n**/`: a name and version alone
on the comment's first line, then a copyright or licence line."""
_LICENCE = re.compile(r"\(c\)|©|copyright|@license", re.IGNORECASE)
_RUNTIMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("webpack runtime", re.compile(
        r"webpackBootstrap|__webpack_require__|__webpack_modules__|webpackChunk|webpackJsonp")),
    ("Parcel runtime", re.compile(r"parcelRequire|\$parcel\$|parcelRegister")),
    ("esbuild runtime", re.compile(r"\bvar __(?:toESM|commonJS|copyProps|export|defProp) = ")),
    ("browserify runtime", re.compile(
        r"function r\(e,n,t\)\{function o\(i,f\)\{|function e\(t,n,r\)\{function s\(o,u\)\{")),
    ("UMD wrapper", re.compile(
        r"typeof exports\s*===?\s*['\"]object['\"]\s*&&\s*typeof module\s*!==?\s*['\"]undefined"
        r"['\"]\s*\?\s*module\.exports\s*=|['\"]object['\"]\s*==\s*typeof exports\s*&&\s*"
        r"['\"]undefined['\"]\s*!=\s*typeof module\s*\?\s*module\.exports\s*=")),
    ("TypeScript or Babel CommonJS output", re.compile(
        r"\(this && this\.__(?:awaiter|extends|assign|importDefault|importStar|createBinding|"
        r"decorate|generator)\)|Object\.defineProperty\(exports, ['\"]__esModule['\"], "
        r"\{ value: true \}\)|function _interopRequireDefault\(")),
)
_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_DOC_GENERATORS = (r"jazzy|javadoc|doxygen|sphinx|docutils|rustdoc|typedoc|mkdocs|hugo|jekyll|"
                   r"docusaurus|vuepress|vitepress|pdoc|pydoctor|epydoc|dokka|scaladoc|docfx|"
                   r"yard|jsdoc|esdoc|exdoc|godoc|pkgsite|sandcastle|haddock|gitbook|antora|"
                   r"asciidoctor|docsify")
_GENERATED_HTML = re.compile(
    r"<meta\s+name=[\"']generator[\"']\s+content=[\"'](?P<meta>[^\"']*\b(?:"
    + _DOC_GENERATORS + r")\b[^\"']*)|<!--\s*Generated by (?P<comment>(?:" + _DOC_GENERATORS
    + r")\b[^>]{0,40}?)\s*-->|(?:Generated|Created|Built|Documentation generated) (?:by|using|"
    r"with)\s*(?:<a\b[^>]*>)?\s*(?P<footer>(?:" + _DOC_GENERATORS + r")\b[^<]{0,30})",
    re.IGNORECASE)
"""An HTML page a documentation generator wrote: its `<meta name="generator">` (rustdoc,
MkDocs, Hugo, TypeDoc, Sphinx's Docutils), a `<!-- Generated by javadoc -->` or Doxygen
comment, or a footer such as jazzy's `Generated by <a ...>jazzy ♪♫ v0.15.4</a>` or
Sphinx's `Created using <a ...>Sphinx</a>`. Such a page restates the source's doc
comments inside navigation and markup, once per class: Alamofire's committed jazzy site
(332 pages, and a docset copy of them) made 48,000 checkpoints beside 60 Swift files."""


def bundle_signature(rel: str, text: str) -> str | None:
    """What marks `text` (the file at `rel`) as build output, by its head and tail, or None."""
    tail = text[-TAIL:]
    if "sourceMappingURL" in tail and (m := _SOURCE_MAP.search(tail)) and (
            m["url"].startswith("data:") or not _in_source_dir(rel)):
        return "ends with a sourceMappingURL comment"
    if rel.lower().endswith(_HTML_SUFFIXES):
        ends = text if len(text) <= HEAD + 2 * TAIL else text[:HEAD] + "\n" + text[-2 * TAIL:]
        if m := _GENERATED_HTML.search(ends):
            what = " ".join((m["meta"] or m["comment"] or m["footer"]).split())[:40]
            return f"generated API documentation ({what})"
        return None
    if not rel.lower().endswith(_WEB_SUFFIXES):
        return None
    head = text[:HEAD]
    if m := _BANNER.match(head):
        return f"bundle banner ({m[0].strip()[:60]})"
    if (m := _DOC_BANNER.match(head)) and _LICENCE.search(m["rest"]):
        return f"bundle banner ({m[0].split(chr(10))[1].strip(' *')[:60]})"
    ends = head if len(text) <= HEAD else head + "\n" + text[-2 * TAIL:]
    for what, regex in _RUNTIMES:
        if regex.search(ends):
            return what
    return None


def _in_source_dir(rel: str) -> bool:
    """Whether `rel` lies under a folder of hand-written source (`SOURCE_DIR_NAMES`)."""
    return any(part in SOURCE_DIR_NAMES for part in rel.split("/")[:-1])


class BuildDirs:
    """Which files of one repository lie where a build writes (cached per folder)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._names: dict[str, frozenset[str]] = {}
        self._named: dict[str, dict[str, str]] = {}

    def built(self, rel: str) -> str | None:
        """Why the file at repo-relative `rel` is build output by its place, or None."""
        parts = rel.split("/")
        for i, seg in enumerate(parts[:-1]):
            if seg.endswith(_METADATA_SUFFIXES):
                return f"Python package metadata ({seg}/)"
            if seg.endswith(".docset"):
                return f"documentation docset ({seg}/)"
            if seg not in BUILD_DIR_NAMES:
                continue
            parent, rest = parts[:i], parts[i + 1 :]
            if why := self._python_build(parent, seg, rest):
                return why
            if field := self._package_names(parent).get(seg):
                return f"build output named by package.json {field!r} ({seg}/)"
            if self._mirrors_src(parent, rest):
                return f"build output of src/ ({seg}/ holds the names of src/)"
        if rel.lower().endswith(_WEB_SUFFIXES) and os.path.lexists(self.root / (rel + ".map")):
            return f"has a source map ({parts[-1]}.map)"
        return None

    def _python_build(self, parent: list[str], seg: str, rest: list[str]) -> str | None:
        if seg != "build" or len(rest) < 2 or not _PYTHON_BUILD.fullmatch(rest[0]):
            return None
        here = self._listing(parent)
        if any(m in here for m in _PYTHON_MARKERS) or self._exists(parent + rest[1:]) or (
                self._exists([*parent, "src", *rest[1:]])):
            return f"Python build copy (build/{rest[0]}/)"
        return None

    def _mirrors_src(self, parent: list[str], rest: list[str]) -> bool:
        """`src/` beside the build folder holds a file of this name (any extension), at the
        same place or one level up (`dist/esm/a/b.js` for `src/a/b.ts`)."""
        if "src" not in self._listing(parent):
            return False
        stem = rest[-1].split(".", 1)[0]
        if not stem:
            return False
        for sub in (rest[:-1], rest[1:-1]):
            names = self._listing([*parent, "src", *sub])
            if any(n.split(".", 1)[0] == stem for n in names):
                return True
        return False

    def _exists(self, parts: list[str]) -> bool:
        return parts[-1] in self._listing(parts[:-1])

    def _listing(self, parts: list[str]) -> frozenset[str]:
        key = "/".join(parts)
        names = self._names.get(key)
        if names is None:
            try:
                names = frozenset(os.listdir(self.root.joinpath(*parts)))
            except OSError:
                names = frozenset()
            self._names[key] = names
        return names

    def _package_names(self, parent: list[str]) -> dict[str, str]:
        """Build folders (`dist`, ...) the `package.json` in `parent` names -> the field."""
        key = "/".join(parent)
        named = self._named.get(key)
        if named is None:
            named = {}
            if "package.json" in self._listing(parent):
                named = _named_dirs(self.root.joinpath(*parent, "package.json"))
            self._named[key] = named
        return named


def _named_dirs(path: Path) -> dict[str, str]:
    raw = read_regular(path, PACKAGE_JSON_MAX, whole=True)  # never a FIFO or a device
    try:
        data = json.loads(b"" if raw is None else raw)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    named: dict[str, str] = {}
    for name in _PACKAGE_FIELDS:
        for value in _strings(data.get(name)):
            first = value.strip().removeprefix("./").split("/", 1)[0]
            if first in BUILD_DIR_NAMES:
                named.setdefault(first, name)
    return named


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value (dict keys too: `browser` maps paths to paths)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [*(k for k in value if isinstance(k, str)),
                *(s for v in value.values() for s in _strings(v))]
    return []
