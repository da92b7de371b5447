"""What a file is for: read as code or prose (embedded), or only looked up (greppable).

`classify(rel, text, rules)` returns a `Role` and a short reason. Code and prose are
`EMBED`. Files nobody reads as code or prose are `Role.lexical_only`: their text goes to
the trigram index (lexical search, `ctxd cat`), but they get no checkpoints, symbols or
summary, so nothing of theirs reaches a semantic, keyword or hybrid answer and they cost
no embedding time:

- lockfiles (`package-lock.json`, `yarn.lock`, `uv.lock`, `go.sum`, `*.lock`, ...): people
  look up locked versions with lexical search;
- vendored third-party trees (`vendor/` beside a package manifest or holding Go's
  `modules.txt`, `third_party/`, `_vendor/`, ...);
- SVG, minified or bundled files (`*.min.js`, source maps) and any file whose bytes sit
  mostly in very long lines (detected from the text, not the name; hand-written code
  only when most of its lines are long, `long_line_count_share`);
- build output (`indexer.walk.buildout`): bundles and compiled copies, by place (a
  `dist/` named by `package.json` or mirroring `src/`, Python's `build/lib/`,
  `*.egg-info/`, a `.map` beside the file) and by text (a trailing `sourceMappingURL`, a
  `/*! name vX.Y.Z` banner, a bundler's runtime) and documentation sites a generator wrote
  (jazzy, javadoc, rustdoc, Sphinx, MkDocs, Doxygen pages, by their generator tag or
  footer);
- certificates (`*.crt`, `*.cer`, `*.der`, PEM blocks) and data blobs (base64, hex dumps);
- data files: tables (`*.csv`, `*.tsv`, JSON Lines), JSON / YAML / XML files of at least
  `LARGE_DATA` characters unless mostly prose (`prose_share`: jq's `manual.yml`), and
  plain-text files that are mostly rows of numbers (recorded measurements such as a
  benchmark's result summaries): line windows over short dense rows made a checkpoint per
  row or two, half of one Rust repository's checkpoints.
- translated documentation (`indexer.walk.translations`): `docs/<lang>/`, `i18n/<lang>/`,
  `README.zh-CN.md` beside `README.md`, ..., confirmed by the language of the prose;
- diagrams saved as text (`*.drawio`, `*.excalidraw`; SVG, with text or not, is above);
- project files an IDE writes (`project.pbxproj`, `*.xib`, `*.storyboard`, `*.sln`);
- lists of people or sponsors (JSON / YAML / TOML of records keyed `login`, `avatarUrl`,
  ...: FastAPI's `people.yml`, an `.all-contributorsrc`) and translation strings
  (message catalogues `*.xliff`, `*.arb`; JSON / YAML in `locales/`, `i18n/`).

A changelog or release notes page longer than `CHANGELOG_EMBEDDED` characters is
`CHANGELOG`: embedded coarsely, only its head (the newest releases; `Role.embedded_lines`),
and greppable whole: a 1,183-checkpoint release-notes page cost as much embedding as the
rest of its framework's docs (issue 42).

Generated code (`*_pb2.py`, `*.pb.go`, a `Code generated ... DO NOT EDIT.` or `@generated`
header, a flex scanner or Bison parser's banner) is `GENERATED`: embedded, but hybrid
ranking demotes it like tests.

The rules are `WalkOptions.lexical_only_rules` (on by default), extra globs
`lexical_only_patterns`, and `embed_allow` globs that lift every rule for what they match
(a file, or a directory and everything under it). Pure but for `VendorDirs`, which looks
for a package manifest beside a `vendor/` directory (one `stat` per directory, cached),
and `buildout.BuildDirs` (cached listings and `package.json` fields). The text rules look
at no more than `SAMPLE` characters of a file (its head and tail), so a file of many
megabytes costs no more than one of one.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ctxd.indexer.walk.buildout import SOURCE_DIR_NAMES, BuildDirs, bundle_signature
from ctxd.indexer.walk.patterns import GlobMatcher, compile_globs
from ctxd.indexer.walk.secrets import is_code_or_docs
from ctxd.indexer.walk.translations import Translations

__all__ = [
    "GENERATED_PATTERNS",
    "LOCKFILE_PATTERNS",
    "RULES_VERSION",
    "VENDOR_DIR_NAMES",
    "Role",
    "TextRules",
    "VendorDirs",
    "classify",
    "long_line_share",
    "prose_share",
    "short_lines",
]


class Role(StrEnum):
    """What a file's text is for (stored in `files.role`; '' = embedded code or prose)."""

    EMBED = ""
    GENERATED = "generated"
    LOCKFILE = "lockfile"
    VENDORED = "vendored"
    MINIFIED = "minified"
    """SVG, minified or bundled files, source maps, files of mostly very long lines."""
    BUILT = "built"
    """Build output: bundles and compiled copies of the source (`indexer.walk.buildout`)."""
    CERTIFICATE = "certificate"
    DATA = "data"
    """Base64 or hex dumps, tables (CSV, TSV), large JSON / YAML / XML data, rows of
    numbers."""
    TRANSLATION = "translation"
    """A documentation page translated from another (`indexer.walk.translations`)."""
    DIAGRAM = "diagram"
    """A diagram saved as text (draw.io, Excalidraw): shapes and coordinates around a few
    labels."""
    LONG_LINES = "long-lines"
    """Hand-written code made mostly of very long lines (tables, blobs): greppable whole,
    only its short lines embedded (`short_lines`), so that a function beside them
    still reaches semantic search without paying for the long lines (issue 39)."""
    CHANGELOG = "changelog"
    """A long changelog or release notes: embedded coarsely (`embedded_lines`: the newest
    releases, its first `CHANGELOG_EMBEDDED` characters), greppable whole."""

    @classmethod
    def _missing_(cls, value: object) -> Role:
        """A role this version does not know (stored by a newer ctxd in a shared index)
        reads as plain code or prose: ranked without a role's demotion, never a crash."""
        return cls.EMBED

    @property
    def lexical_only(self) -> bool:
        """Kept greppable, never embedded (no checkpoints, symbols or summary)."""
        return self not in (Role.EMBED, Role.GENERATED, Role.CHANGELOG, Role.LONG_LINES)

    def embedded_lines(self, text: str) -> int | None:
        """The last line of `text` whose checkpoints are embedded (the rest stays
        greppable), or None for all of them: a changelog embeds its head only."""
        if self is not Role.CHANGELOG or len(text) <= CHANGELOG_EMBEDDED:
            return None
        return text.count("\n", 0, CHANGELOG_EMBEDDED) + 1


LOCKFILE_PATTERNS: tuple[str, ...] = (
    "*.lock", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "go.sum",
    "go.work.sum", "vendor.sum", "Package.resolved", "packages.lock.json", "gradle.lockfile",
    "*.lockfile", "conda-lock.yml", "Pipfile.lock", "MODULE.bazel.lock", "deno.lock",
    "bun.lock", "pylock.toml", "pylock.*.toml", "gems.locked", "Cartfile.resolved",
    ".terraform.lock.hcl", "cabal.project.freeze", "Manifest.toml", "vcpkg-lock.json",
)
"""Lockfile names: Go (`go.sum`, `vendor.sum`), JS (`package-lock.json`, `pnpm-lock.yaml`,
`bun.lock`), Python (`Pipfile.lock`, `pylock.toml`), Swift (`Package.resolved`), .NET
(`packages.lock.json`), Gradle, Terraform, Julia (`Manifest.toml`), ...; `*.lock` covers
yarn, uv, poetry, pdm, Cargo, Gemfile, composer, mix, pubspec, Podfile and flake."""

MINIFIED_PATTERNS: tuple[str, ...] = (
    "*.svg", "*.svgz", "*.min.js", "*.min.mjs", "*.min.cjs", "*.min.css", "*.map",
    "*.bundle.js", "*-bundle.js", "*.chunk.js", "*.chunk.css",
)
CERTIFICATE_PATTERNS: tuple[str, ...] = (
    "*.crt", "*.cer", "*.der", "*.csr", "*.crl", "*.p7b", "*.p7c", "*.srl",
)
DATA_PATTERNS: tuple[str, ...] = ("*.b64", "*.base64", "*.hex", "*.csv", "*.tsv", "*.psv",
                                   "*.jsonl", "*.ndjson")
LARGE_DATA_SUFFIXES: tuple[str, ...] = (".json", ".yaml", ".yml", ".xml")
"""Structured data formats whose large files are data, not configuration."""
LARGE_DATA = 100_000
"""Characters from which a JSON / YAML / XML file counts as data (configuration files are
far smaller: a `package.json` or a CI workflow is a few KB), unless it is mostly prose."""
PROSE_SHARE = 0.4
"""A large JSON / YAML / XML file with at least this share of its characters in lines of
prose (`prose_share`) is a document written in a data format (jq's `manual.yml`: 0.6; a
`package-lock.json` or an index of results: 0.0), not data."""
PROSE_WORDS = 6
"""A line of prose has at least this many words, most of its blank-separated tokens."""
DIAGRAM_PATTERNS: tuple[str, ...] = ("*.drawio", "*.dio", "*.excalidraw", "*.excalidraw.json",
                                      "*.excalidrawlib")
"""Diagrams saved as text (SVG, with or without text, is `MINIFIED_PATTERNS`)."""
IDE_PROJECT_PATTERNS: tuple[str, ...] = ("*.pbxproj", "*.xcworkspacedata", "*.xcscheme",
                                         "*.xcsettings", "*.xib", "*.storyboard", "*.sln",
                                         "*.vcxproj.filters")
"""Project files an IDE writes (Xcode's `project.pbxproj`, interface builder documents,
Visual Studio solutions): object identifiers and build settings, looked up, not read
(Alamofire's `project.pbxproj` was 782 checkpoints, 14% of the repository's)."""
CATALOG_PATTERNS: tuple[str, ...] = ("*.xliff", "*.xlf", "*.arb")
"""Message catalogues: translation strings, looked up, not read (gettext's `*.po` in a
language's folder is a translation, `indexer.walk.translations`)."""
_CATALOG_DIRS = frozenset({"locale", "locales", "i18n", "l10n", "translations", "lang",
                           "langs", "messages"})
"""Folders whose JSON / YAML files are translation strings (`locales/de.json`)."""
_PEOPLE_KEY = re.compile(
    r"""^\s*-?\s*["']?\w*(login|avatar\w*|username|github|twitter|sponsors?|tier|email|"""
    r"""url|img|name|title|count|stars|profile|website)["']?\s*[:=]""", re.MULTILINE)
"""The keys of a list of people, sponsors or their projects (FastAPI's `people.yml`,
`sponsors.yml`, `topic_repos.yml`, an `.all-contributorsrc`, a `sponsors.json`)."""
_PEOPLE_MARK = re.compile(r"""["']?\w*(login|avatar\w*|img)["']?\s*[:=]""")
"""A key that records of people and sponsors carry (`login`, `owner_login`, `avatarUrl`,
a sponsor's `img`)."""
PEOPLE_RECORDS = 10
"""A JSON / YAML file with this many records keyed like people (`_PEOPLE_MARK`), which
make at least `PEOPLE_SHARE` of its lines with the other keys of such lists, is data."""
PEOPLE_SHARE = 0.5
CHANGELOG_EMBEDDED = 32_000
"""A changelog longer than this many characters is `Role.CHANGELOG`: only the checkpoints
starting in its first this many characters (the newest releases: 80 to 100 in a
1,000-release page) are embedded; all of it stays greppable."""
CHANGELOG_NAME = re.compile(
    r"(^|/)(changes|changelog|history|news|releases?|release[_-]?notes)"
    r"(\.(md|markdown|mdx|rst|txt|adoc|asciidoc|org|rdoc))?$", re.IGNORECASE)
"""`CHANGES.rst`, `CHANGELOG.md`, `HISTORY.md`, `NEWS`, `release-notes.md`, ... (pages,
not a module called `history.py`)."""
PLAIN_TEXT_SUFFIXES: tuple[str, ...] = ("", ".txt", ".out", ".log", ".dat")
"""Names the numeric-rows rule looks at (code, Markdown and the like never count)."""
NUMERIC_ROWS = 0.4
"""A plain-text file with at least this share of its non-blank lines holding two numbers
or more (and at least `MIN_ROWS` lines) is data."""
MIN_ROWS = 20
GENERATED_PATTERNS: tuple[str, ...] = (
    "*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py", "*.pb.go", "*.pb.gw.go", "*_grpc.pb.go",
    "*.pb.cc", "*.pb.h", "*.pb.swift", "*_generated.go", "zz_generated*.go",
    "*.generated.*", "*.g.dart", "*.freezed.dart", "*.designer.cs", "*_pb.js", "*_pb.d.ts",
)

VENDOR_DIR_NAMES = frozenset({"third_party", "third-party", "thirdparty", "3rdparty",
                              "_vendor", "vendored", "external_libs"})
"""Directory names that hold third-party code wherever they are."""
_VENDOR = "vendor"
"""`vendor/` holds third-party code when a package manifest sits beside it (Go, PHP,
Ruby, JS, Rust, Python projects) or it holds Go's `modules.txt`, Composer's
`autoload.php` or Bundler's `bundle/`; elsewhere it may be a project's own code."""
_VENDOR_SIBLINGS = ("go.mod", "composer.json", "Gemfile", "package.json", "Cargo.toml",
                    "pyproject.toml", "setup.py", "build.gradle", "pom.xml")
_VENDOR_INSIDE = ("modules.txt", "autoload.php", "bundle")

_GENERATED_HEAD = re.compile(
    r"Code generated .{0,200}DO NOT EDIT|@generated\b|\bauto-?generated\b.{0,80}\b(do not|don't) "
    r"(edit|modify)|This file (was|is) (automatically|auto-?) ?generated|"
    r"Generated by the protocol buffer compiler|A lexical scanner generated by flex|"
    r"A Bison parser, made by GNU Bison|Generated by re2c\b|generated by ANTLR|"
    r"This file is generated by (?:gperf|Cython)|Generated by Cython",
    re.IGNORECASE,
)
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----")
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
_HEX_LINE = re.compile(r"(?:[0-9a-fA-F]{4,}:?\s+)?(?:[0-9a-fA-F]{2}\s?){16,}.*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
"""A number standing alone (`0.159`, `68`; not a version such as `23.2.0`, nor `utf8`)."""

RULES_VERSION = 12
"""The version of the built-in rules (here and in `indexer.walk.secrets`): stored with a
repository's options, so that a change of the rules re-decides unchanged files once (1:
issue 15; 2: build output, more lockfiles, secrets by content; 3: data files; 4:
translations; 5: diagrams, people and translation-string data, long changelogs coarse;
6: issue 39, secrets in code layouts, base64 keys, Kubernetes Secrets, URL passwords, and
long lines in hand-written code: `LONG_LINES`, its short lines embedded; 7: a large
JSON / YAML / XML file that is mostly prose, such as jq's `manual.yml`, is embedded; 8: HTML
pages a documentation generator wrote, such as jazzy's or javadoc's, are build output; 9:
Dash docsets are build output, IDE project files such as Xcode's `project.pbxproj` data;
10: parsers and scanners that flex, Bison, re2c, ANTLR, gperf or Cython wrote are generated;
11: pages named for their language by a country or in capitals, such as vConsole's
`tutorial_CN.md` or `README-JP.md`, are translations; 12: a gettext catalogue
`<locale>/LC_MESSAGES/*.po` is a translation whatever its locale's code, such as
humanize's Klingon `tlh`)."""

LONG_LINE = 1000
"""Characters from which a line counts as very long."""
DENSE_SPACES = 0.1
"""A long line with fewer blanks than this share of its characters is dense (not prose)."""
LONG_LINE_SHARE = 0.5
"""A file with at least this share of its characters in very long lines is minified."""
MIN_SIZE = 1000
"""The long-line and blob rules look only at files of at least this many characters."""
SAMPLE = 1 << 20
"""The content rules look at most at this many characters: half from the head, half from
the tail of a larger file."""


@dataclass(frozen=True, slots=True)
class TextRules:
    """The compiled rules (from `WalkOptions`: `lexical_only_rules`,
    `lexical_only_patterns`, `embed_allow`)."""

    enabled: bool = True
    extra: GlobMatcher = field(default_factory=lambda: compile_globs((), "lexical_only"))
    allow: GlobMatcher = field(default_factory=lambda: compile_globs((), "embed_allow"))

    @staticmethod
    @functools.lru_cache(maxsize=16)
    def build(enabled: bool, extra: tuple[str, ...], allow: tuple[str, ...]) -> TextRules:
        """The compiled rules, once per distinct setting (hybrid search asks per query)."""
        return TextRules(enabled, compile_globs(extra, "lexical_only_patterns"),
                         compile_globs(allow, "embed_allow"))

    def allowed(self, rel: str) -> bool:
        """`embed_allow` matches the file or a directory above it."""
        if not self.allow:
            return False
        name = rel.rsplit("/", 1)[-1]
        if self.allow.match_file(rel, name):
            return True
        parts = rel.split("/")[:-1]
        return any(self.allow.match_dir("/".join(parts[: i + 1]), parts[i])
                   for i in range(len(parts)))


_LOCKFILES = compile_globs(LOCKFILE_PATTERNS, "lockfile")
_MINIFIED = compile_globs(MINIFIED_PATTERNS, "minified", ignore_case=True)
_CERTIFICATES = compile_globs(CERTIFICATE_PATTERNS, "certificate", ignore_case=True)
_DATA = compile_globs(DATA_PATTERNS + CATALOG_PATTERNS, "data", ignore_case=True)
_DIAGRAMS = compile_globs(DIAGRAM_PATTERNS, "diagram", ignore_case=True)
_IDE_PROJECTS = compile_globs(IDE_PROJECT_PATTERNS, "IDE project", ignore_case=True)
_GENERATED = compile_globs(GENERATED_PATTERNS, "generated")


class VendorDirs:
    """Which directories of one repository hold vendored third-party code (cached)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, bool] = {}

    def vendored(self, rel: str) -> str | None:
        """The vendored directory `rel` lies under (e.g. `vendor`), or None."""
        parts = rel.split("/")[:-1]
        for i, name in enumerate(parts):
            if name in VENDOR_DIR_NAMES or (name == _VENDOR and self._is_vendor(parts[:i])):
                return "/".join(parts[: i + 1])
        return None

    def _is_vendor(self, parent: list[str]) -> bool:
        key = "/".join(parent)
        hit = self._cache.get(key)
        if hit is None:
            base = self.root.joinpath(*parent)
            hit = any((base / m).exists() for m in _VENDOR_SIBLINGS) or any(
                (base / _VENDOR / m).exists() for m in _VENDOR_INSIDE)
            self._cache[key] = hit
        return hit


def long_line_share(text: str) -> float:
    """The share of `text`'s characters in dense lines of at least `LONG_LINE` characters.

    Dense: under `DENSE_SPACES` of the line is blanks. An unwrapped paragraph of prose
    (a Markdown habit) has a blank every five or six characters; minified code, JSON,
    base64 and CSS have almost none."""
    if not text:
        return 0.0
    long = sum(len(line) for line in text.split("\n")
               if len(line) >= LONG_LINE and line.count(" ") < len(line) * DENSE_SPACES)
    return long / len(text)


def short_lines(text: str) -> str:
    """`text` with every line of at least `LONG_LINE` characters emptied (line numbers
    kept): what a `Role.LONG_LINES` file is chunked and embedded from."""
    return "\n".join("" if len(line) >= LONG_LINE else line for line in text.split("\n"))


def long_line_count_share(text: str) -> float:
    """The share of `text`'s non-blank lines that are dense lines of at least `LONG_LINE`
    characters (`long_line_share` counts characters: one 3,000-character line is most of a
    small file's characters, but one line of fifty)."""
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return 0.0
    long = sum(1 for line in lines
               if len(line) >= LONG_LINE and line.count(" ") < len(line) * DENSE_SPACES)
    return long / len(lines)


HAND_WRITTEN_MAX = 1 << 20
"""Characters up to which hand-written code is judged by its share of long lines: a larger
file of long lines stays lexical-only (embedded, `max_file_size`'s default would refuse
it whole)."""
_MINIFIABLE = (".js", ".mjs", ".cjs", ".css", ".json", ".map", ".svg", ".html", ".htm")
"""What builds minify: elsewhere a long line is a table or a blob in hand-written code."""


def _hand_written(rel: str) -> bool:
    """Source code that nobody minifies (`.py`, `.go`, ...), or any file under a folder of
    hand-written source (`src/`, `app/`, ...: `buildout.SOURCE_DIR_NAMES`): one long line
    (a table, a blob) does not make it minified, only a majority of long lines does, so
    that a short function beside a 3,000-character line stays embedded (issue 39)."""
    if not rel:
        return False
    low = rel.lower()
    if any(part in SOURCE_DIR_NAMES for part in low.split("/")[:-1]):
        return True
    return is_code_or_docs(low) and not low.endswith(_MINIFIABLE)


def _blob_share(lines: list[str]) -> float:
    body = [line.strip() for line in lines if line.strip()]
    if not body:
        return 0.0
    blob = sum(1 for line in body if _BASE64_LINE.fullmatch(line) or _HEX_LINE.fullmatch(line))
    return blob / len(body)


def classify(
    rel: str, text: str, rules: TextRules, vendor: VendorDirs | None = None,
    built: BuildDirs | None = None, translations: Translations | None = None,
) -> tuple[Role, str]:
    """The role of the file at repo-relative `rel` with content `text`, and why.

    `vendor`, `built` and `translations` look at the file's place in the tree (without
    them, only the name and the text decide, e.g. for files only a remote engine has)."""
    if rules.allowed(rel):
        return Role.EMBED, "embed_allow"
    name = rel.rsplit("/", 1)[-1]
    if rules.extra and (pat := rules.extra.which_file(rel, name)):
        return Role.VENDORED, f"lexical_only_patterns {pat!r}"
    if rules.enabled:
        if (found := _name_role(rel, name, vendor)) is not None:
            return found
        if built is not None and (why := built.built(rel)):
            return Role.BUILT, why
        sample = text if len(text) <= SAMPLE else text[: SAMPLE // 2] + text[-SAMPLE // 2 :]
        if len(text) >= MIN_SIZE and (found := _content_role(sample, rel, len(text))):
            return found
        if len(text) >= MIN_SIZE and (found := _data_role(name, sample, len(text))):
            return found
        if why := bundle_signature(rel, text):
            return Role.BUILT, why
        if translations is not None and (lang := translations.language(rel, text)):
            return Role.TRANSLATION, f"{lang[1]}, language {lang[0]!r}"
        if len(text) > CHANGELOG_EMBEDDED and CHANGELOG_NAME.search(rel):
            return Role.CHANGELOG, (
                f"changelog of {len(text) // 1000} KB: its first {CHANGELOG_EMBEDDED // 1000}"
                " KB (the newest releases) embedded, all of it greppable")
    head = text[:2000]
    if (pat := _GENERATED.which_file(rel, name)) or _GENERATED_HEAD.search(head):
        return Role.GENERATED, f"generated ({pat!r})" if pat else "generated (header)"
    return Role.EMBED, ""


def _name_role(rel: str, name: str, vendor: VendorDirs | None) -> tuple[Role, str] | None:
    if pat := _LOCKFILES.which_file(rel, name):
        return Role.LOCKFILE, f"lockfile ({pat!r})"
    if vendor is not None and (where := vendor.vendored(rel)):
        return Role.VENDORED, f"vendored third-party code ({where}/)"
    if pat := _MINIFIED.which_file(rel, name):
        return Role.MINIFIED, f"minified, bundled or SVG ({pat!r})"
    if pat := _CERTIFICATES.which_file(rel, name):
        return Role.CERTIFICATE, f"certificate ({pat!r})"
    if pat := _DATA.which_file(rel, name):
        return Role.DATA, f"data file ({pat!r})"
    if pat := _IDE_PROJECTS.which_file(rel, name):
        return Role.DATA, f"IDE project file ({pat!r})"
    if pat := _DIAGRAMS.which_file(rel, name):
        return Role.DIAGRAM, f"diagram ({pat!r})"
    if where := _catalog(rel):
        return Role.DATA, f"translation strings ({where}/)"
    return None


_PROSE_WORD = re.compile(r"[(\"'`]?[A-Za-z][a-z]*[,.;:!?)\"'`]*")
"""A word of a sentence (`the`, `Returns`, `(see`, `value.`), not a key, number or path."""


def prose_share(text: str) -> float:
    """The share of `text`'s non-blank characters in lines of prose: at least `PROSE_WORDS`
    words that make up at least 70% of the line's blank-separated tokens."""
    total = prose = 0
    for line in text.split("\n"):
        stripped = line.strip()
        total += len(stripped)
        tokens = stripped.split()
        words = sum(1 for t in tokens if _PROSE_WORD.fullmatch(t))
        if words >= PROSE_WORDS and words >= 0.7 * len(tokens):
            prose += len(stripped)
    return prose / total if total else 0.0


def _data_role(name: str, text: str, size: int) -> tuple[Role, str] | None:
    """Large structured data (not a manual written as one), or plain text that is mostly
    rows of numbers."""
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    if (suffix in LARGE_DATA_SUFFIXES and size >= LARGE_DATA
            and prose_share(text) < PROSE_SHARE):
        return Role.DATA, f"{suffix[1:].upper()} data of {size // 1000} KB"
    if suffix in _RECORD_SUFFIXES:
        if why := _records(name, text):
            return Role.DATA, why
    if suffix in PLAIN_TEXT_SUFFIXES:
        rows = [line for line in text.split("\n") if line.strip()]
        numeric = sum(1 for line in rows if len(_NUMBER.findall(line)) >= 2)
        if len(rows) >= MIN_ROWS and numeric >= NUMERIC_ROWS * len(rows):
            return Role.DATA, f"rows of numbers ({numeric} of {len(rows)} lines)"
    return None


_RECORD_SUFFIXES = (".json", ".yaml", ".yml", ".toml")


def _records(name: str, text: str) -> str | None:
    """Why a JSON / YAML / TOML file is a list of people or sponsors, else None."""
    marks = len(_PEOPLE_MARK.findall(text))
    if marks < PEOPLE_RECORDS:
        return None
    lines = sum(1 for line in text.split("\n") if line.strip().strip("{}[],"))
    keyed = len(_PEOPLE_KEY.findall(text))
    if keyed < PEOPLE_SHARE * lines:
        return None
    return f"people or sponsors ({marks} records in {name})"


def _catalog(rel: str) -> str | None:
    """The translation-strings folder a JSON / YAML file sits in (`locales/de.json`)."""
    *folders, name = rel.split("/")
    if not name.lower().endswith(_RECORD_SUFFIXES[:3]):
        return None
    return next((f for f in folders if f.lower() in _CATALOG_DIRS), None)


def _content_role(text: str, rel: str = "", size: int = 0) -> tuple[Role, str] | None:
    share = long_line_share(text)
    if share >= LONG_LINE_SHARE:
        why = f"{share:.0%} of it in lines over {LONG_LINE} characters"
        if not _hand_written(rel) or size > HAND_WRITTEN_MAX:
            return Role.MINIFIED, why
        if long_line_count_share(text) >= LONG_LINE_SHARE:
            return Role.LONG_LINES, why + ", its short lines embedded"
    lines = text.split("\n")
    if _PEM.search(text) and _blob_share(lines) >= 0.5:
        return Role.CERTIFICATE, "PEM blocks (certificate or key material)"
    if len(lines) >= 8 and _blob_share(lines) >= 0.8:
        return Role.DATA, "base64 or hex dump"
    return None
