"""Glob compilation for include, exclude and sensitive-file patterns.

Provides `compile_globs(patterns, field) -> GlobMatcher`, a pure function that validates
and compiles user globs once; the walker (`indexer/walk/walker.py`) and the config loader call
it, and it calls nothing but `re` and `re2`.

Syntax (Go `filepath.Match`, plus `**`):

- `*` any run of characters except `/`; `?` one character except `/`;
- `[abc]`, `[a-z]`, `[!a-z]` / `[^a-z]` a character class (never matches `/`; a `]` right
  after the `[` is literal); `\\x` escapes `x`;
- `**` as a whole path segment spans any number of segments, zero included: `**/*.go`
  matches `main.go` and `a/b/main.go`; `a/**/b` matches `a/b` and `a/x/y/b`; a trailing
  `/**` matches everything under the prefix (`vendor/**` matches `vendor/x/y.go`, not the
  path `vendor` itself); `**` elsewhere (`a**b`) is the same as `*`;
- a leading `/` anchors the pattern to the repository root (matched against the
  repo-relative path only, never the basename); a trailing `/` makes it match
  directories only (`vendor/`).

Matching (`GlobMatcher.match_file`): a pattern matches a path when it matches, in full,
either the basename or the whole repo-relative POSIX path (the contract's rule).
Directories (`GlobMatcher.match_dir`) match the same way, and in addition a pattern
`P/**` matches a directory that `P` matches, so `vendor/**` and `node_modules/**` prune
those directories (at any depth, since `P` may match the basename) without descending.

Matching time is linear in the length of the path, whatever the pattern (a hostile
`--exclude '**/**/d/**/d/**/zzz'` on a 2,000-level tree included): consecutive `**`
segments collapse into one, and a glob is run by Python's backtracking `re` only when that
stays linear in the depth (at most one `**` before the last segment, and at most two `*`
in a segment, whose cost is bounded by the square of one name's length, 255 bytes at most:
`**/*.py`, `vendor/**`, `src/**/gen/**`, `*secret*`, the common cases, at about a
microsecond a match); any other glob is run by RE2 (`google-re2`), which guarantees
linear time (a few microseconds a match; a path lacking one of the glob's literal runs
is turned away before RE2 is called).

Invariants: compiling is the only place a pattern can fail; a compiled matcher never
raises; an empty matcher matches nothing; a match never backtracks super-linearly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import re2

from ctxd.indexer.errors import ValidationError

__all__ = ["GlobMatcher", "compile_globs", "glob_to_regex"]

_GLOB_HINT = (
    "Globs support *, ?, [a-z], [!a-z] and ** (any number of path segments); "
    "escape a literal '[', '*' or '?' with a backslash."
)

MAX_GLOB_LENGTH = 4096
"""The longest glob accepted (PATH_MAX: no longer path exists to match)."""

Match = Callable[[str], object]
"""A compiled full-match test over a basename or a repo-relative path: a match object (or
True) when it matches, None when it does not."""


class _BadGlob(ValueError):
    """Raised by the translator; turned into a ValidationError by `compile_globs`."""


@dataclass(frozen=True, slots=True)
class _Source:
    """One glob translated: the regex source, and whether backtracking is linear on it."""

    regex: str
    linear: bool
    """At most one `**` before the last segment and at most two `*` in each segment:
    Python's `re` matches it in time linear in the depth; otherwise only RE2 does."""
    requires: tuple[tuple[str, ...], ...] = ()
    """For each alternative, the literal runs every match holds (`**/tests/**/*fix*`:
    `tests/` and `fix`): a text lacking them all is no match, found without calling RE2."""


@dataclass(frozen=True, slots=True)
class _Compiled:
    """One pattern, translated."""

    pattern: str
    source: _Source
    """Full-match regex over a basename or a repo-relative path."""
    dir_source: _Source | None
    """For `P/**` patterns: the regex of `P`, matched against directories."""
    match: Match
    dir_match: Match | None
    anchored: bool
    """Leading `/`: matched against the repo-relative path only."""
    dir_only: bool
    """Trailing `/`: matches directories only."""


@dataclass(frozen=True, slots=True)
class GlobMatcher:
    """A compiled, immutable set of globs. Build it with `compile_globs`.

    Each kind of match (file path, file basename, directory path, directory basename) is
    first answered by one combined regex, so a miss, the common case, costs one or two
    regex calls whatever the number of patterns; the per-pattern loop runs only on a hit,
    to name the pattern.
    """

    patterns: tuple[str, ...]
    _items: tuple[_Compiled, ...]
    _file_path: Match | None
    _file_name: Match | None
    _dir_path: Match | None
    _dir_name: Match | None

    def __bool__(self) -> bool:
        return bool(self._items)

    def match_file(self, rel_path: str, name: str | None = None) -> bool:
        """Whether any pattern matches this file (its basename or its repo-relative path)."""
        if name is None:
            name = rel_path.rpartition("/")[2]
        return _hit(self._file_path, rel_path) or _hit(self._file_name, name)

    def match_dir(self, rel_path: str, name: str | None = None) -> bool:
        """Whether any pattern matches this directory (see the module docstring)."""
        if name is None:
            name = rel_path.rpartition("/")[2]
        return _hit(self._dir_path, rel_path) or _hit(self._dir_name, name)

    def which_file(self, rel_path: str, name: str | None = None) -> str | None:
        """The first pattern that matches the file `rel_path`, or None.

        Args:
            rel_path: repo-relative POSIX path.
            name: its basename, when the caller already has it (saves a split).
        """
        if name is None:
            name = rel_path.rpartition("/")[2]
        if not self.match_file(rel_path, name):
            return None
        for item in self._items:
            if not item.dir_only and _matches(item, item.match, rel_path, name):
                return item.pattern
        return None  # pragma: no cover - the combined regex said yes

    def which_dir(self, rel_path: str, name: str | None = None) -> str | None:
        """The first pattern that matches the directory `rel_path`, or None."""
        if name is None:
            name = rel_path.rpartition("/")[2]
        if not self.match_dir(rel_path, name):
            return None
        for item in self._items:
            for match in (item.match, item.dir_match):
                if match is not None and _matches(item, match, rel_path, name):
                    return item.pattern
        return None  # pragma: no cover - the combined regex said yes


def _hit(match: Match | None, text: str) -> bool:
    return match is not None and match(text) is not None


def _matches(item: _Compiled, match: Match, rel_path: str, name: str) -> bool:
    if match(rel_path) is not None:
        return True
    return not item.anchored and match(name) is not None


def compile_globs(patterns: Iterable[str], field: str, *, ignore_case: bool = False) -> GlobMatcher:
    """Validate and compile globs.

    Args:
        patterns: the globs, in the caller's order.
        field: the option they came from (`include_patterns`, `exclude_patterns`,
            `sensitive_allow`), named in the error.
        ignore_case: match case-insensitively (used for the built-in sensitive list).

    Returns:
        A `GlobMatcher`; empty when `patterns` is empty.

    Raises:
        ValidationError: a pattern is empty or malformed. The message is the contract's
            `invalid include pattern` / `invalid exclude pattern` (`invalid <field> pattern`
            for other fields); `details` = `{"field", "pattern", "reason"}`; the hint names
            the pattern.
    """
    label = field.removesuffix("_patterns")
    if isinstance(patterns, str | bytes):
        raise ValidationError(
            f"{field} must be a list of patterns",
            hint=f"Pass a list, e.g. [{patterns!r}], not a single string.",
            details={"field": field, "pattern": patterns},
        )
    items: list[_Compiled] = []
    pats = tuple(patterns)
    for pat in pats:
        try:
            items.append(_compile_one(pat, ignore_case))
        except _BadGlob as exc:
            raise ValidationError(
                f"invalid {label} pattern",
                hint=f"Fix the pattern {pat!r} ({exc}). {_GLOB_HINT}",
                details={"field": field, "pattern": pat, "reason": str(exc)},
            ) from None
    files = [i for i in items if not i.dir_only]
    dir_sources = [i.source for i in items]
    dir_sources += [i.dir_source for i in items if i.dir_source is not None]
    dir_name_sources = [i.source for i in items if not i.anchored]
    dir_name_sources += [
        i.dir_source for i in items if i.dir_source is not None and not i.anchored
    ]
    try:
        return GlobMatcher(
            pats,
            tuple(items),
            _any([i.source for i in files], ignore_case),
            _any([i.source for i in files if not i.anchored], ignore_case),
            _any(dir_sources, ignore_case),
            _any(dir_name_sources, ignore_case),
        )
    except _BadGlob as exc:
        raise ValidationError(
            f"invalid {label} pattern",
            hint=f"Use fewer or simpler {field} ({exc}).",
            details={"field": field, "pattern": list(pats), "reason": str(exc)},
        ) from None


def _any(sources: list[_Source], ignore_case: bool) -> Match | None:
    if not sources:
        return None
    joined = "|".join(f"(?:{s.regex})" for s in sources)
    requires = tuple(r for s in sources for r in s.requires)
    return _compile_source(_Source(joined, all(s.linear for s in sources), requires),
                           ignore_case)


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.never_capture = True


def _compile_source(source: _Source, ignore_case: bool) -> Match:
    """A full-match test for `source`: Python's `re` where it is linear, else RE2."""
    flags = "(?si)" if ignore_case else "(?s)"
    if source.linear:
        return re.compile(flags + source.regex).fullmatch
    try:
        rx2 = re2.compile((flags + source.regex).encode("utf-8"), _RE2_OPTIONS)
    except re2.error as exc:  # only resource limits: the syntax is ours
        raise _BadGlob(f"too complex: {exc}") from None

    def full(text: str) -> object:
        return rx2.fullmatch(text.encode("utf-8", "surrogatepass"))

    requires = source.requires
    if ignore_case or not requires or not all(requires):
        return full  # (case folding is RE2's: a literal test could disagree with it)
    if len(requires) == 1:  # one glob: its longest literal first, the rarest as a rule
        lits = tuple(sorted(requires[0], key=len, reverse=True))

        def prefiltered(text: str) -> object:
            for lit in lits:
                if lit not in text:
                    return None
            return full(text)

        return prefiltered

    def any_prefiltered(text: str) -> object:
        if not any(all(lit in text for lit in req) for req in requires):
            return None
        return full(text)

    return any_prefiltered


def _compile_one(pat: str, ignore_case: bool) -> _Compiled:
    if not isinstance(pat, str):
        raise _BadGlob("a pattern must be a string")
    if not pat or pat in ("/", "//"):
        raise _BadGlob("empty pattern")
    if "\x00" in pat:
        raise _BadGlob("NUL character")
    if len(pat) > MAX_GLOB_LENGTH:
        raise _BadGlob(f"longer than {MAX_GLOB_LENGTH} characters")
    try:
        pat.encode("utf-8")
    except UnicodeEncodeError:
        raise _BadGlob("not valid UTF-8 (a lone surrogate)") from None
    body = pat
    anchored = body.startswith("/")
    if anchored:
        body = body[1:]
    dir_only = body.endswith("/") and not body.endswith("\\/")
    if dir_only:
        body = body[:-1]
    if not body:
        raise _BadGlob("empty pattern")
    body = _collapse_globstars(body)
    source = _translate(body)
    dir_source = None
    if body.endswith("/**") and len(body) > 3:
        dir_source = _translate(body[:-3])
    return _Compiled(
        pat,
        source,
        dir_source,
        _compile_source(source, ignore_case),
        None if dir_source is None else _compile_source(dir_source, ignore_case),
        anchored,
        dir_only,
    )


def _collapse_globstars(glob: str) -> str:
    """`a/**/**/b` -> `a/**/b`, `**/**` -> `**`: consecutive `**` segments mean the same
    as one, and each one more would multiply a backtracking match's work by the depth."""
    segments: list[str] = []
    start = i = 0
    while i < len(glob):
        if glob[i] == "\\":
            i += 2
            continue
        if glob[i] == "/":
            segments.append(glob[start:i])
            start = i + 1
        i += 1
    segments.append(glob[start:])
    out: list[str] = []
    for seg in segments:
        star = len(seg) >= 2 and seg.strip("*") == ""
        if star and out and out[-1] == "**":
            continue
        out.append("**" if star else seg)
    return "/".join(out)


def glob_to_regex(glob: str) -> str:
    """Translate one glob (no leading/trailing-slash markers) to a full-match regex source
    (the syntax both Python's `re` and RE2 read; `.` must match a newline: `(?s)`).

    Raises:
        ValueError: malformed glob (unterminated `[`, bad range, trailing backslash).
    """
    return _translate(_collapse_globstars(glob)).regex


def _translate(glob: str) -> _Source:
    out: list[str] = []
    i, n = 0, len(glob)
    spans = 0  # wildcards that cross `/`
    stars = most_stars = 0  # `*` runs in the current segment, and the most in one
    literals: list[str] = []
    run = ""  # the literal characters since the last wildcard
    while i < n:
        c = glob[i]
        if run and c in "*?[":
            literals.append(run)
            run = ""
        if c == "*":
            regex, i, spanning = _star(glob, i, not out)
            out.append(regex)
            if spanning and i < n:  # a trailing `**` only ever succeeds or fails at once
                spans += 1
            else:
                stars += 1
                most_stars = max(most_stars, stars)
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _char_class(glob, i)
            out.append(cls)
        elif c == "\\":
            if i + 1 >= n:
                raise _BadGlob("trailing backslash")
            out.append(_esc(glob[i + 1]))
            run += glob[i + 1]
            i += 2
        else:
            if c == "/":
                stars = 0
            out.append(_esc(c))
            run += c
            i += 1
    if run:
        literals.append(run)
    return _Source("".join(out), spans <= 1 and most_stars <= 2, (tuple(literals),))


def _star(glob: str, i: int, first: bool) -> tuple[str, int, bool]:
    """The regex for the run of `*` at `glob[i]`, the index after it, and whether it spans
    segments (`**` as a whole segment) or stays in one (`*`, or `**` inside a name)."""
    n = len(glob)
    j = i
    while j < n and glob[j] == "*":
        j += 1
    seg_start = i == 0 or glob[i - 1] == "/"
    seg_end = j == n or glob[j] == "/"
    if j - i < 2 or not (seg_start and seg_end):
        return "[^/]*", j, False
    if j == n:
        # `**` at the end: everything (after `x/`, one or more characters).
        return (".*" if first else ".+"), j, True
    # `**/`: zero or more whole segments.
    return "(?:.*/)?", j + 1, True


def _esc(c: str) -> str:
    """One literal character, escaped the same way for `re` and RE2 (`\\xHH` for every
    ASCII character that is not a letter or digit; others stand for themselves)."""
    if c.isascii() and not c.isalnum():
        return f"\\x{ord(c):02x}"
    return c


_SLASH = ord("/")


def _char_class(glob: str, start: int) -> tuple[str, int]:
    """Translate the class starting at `glob[start] == '['`; return (regex, next index).

    A class never matches `/`: it is left out of the class's ranges (no lookahead: RE2
    has none); a class of nothing but `/` matches nothing."""
    i, n = start + 1, len(glob)
    negate = i < n and glob[i] in "!^"
    if negate:
        i += 1
    ranges: list[tuple[int, int]] = []
    first = True
    while True:
        if i >= n:
            raise _BadGlob("unterminated character class '['")
        c = glob[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        lo, i = _class_char(glob, i)
        if i + 1 < n and glob[i] == "-" and glob[i + 1] != "]":
            hi, i = _class_char(glob, i + 1)
            if lo > hi:
                raise _BadGlob(f"bad character range {lo}-{hi}")
            ranges.append((ord(lo), ord(hi)))
        else:
            ranges.append((ord(lo), ord(lo)))
    if negate:
        return "[^/" + "".join(_class_range(a, b) for a, b in ranges) + "]", i
    kept: list[tuple[int, int]] = []
    for first_cp, last_cp in ranges:
        if first_cp <= _SLASH <= last_cp:
            parts = ((first_cp, _SLASH - 1), (_SLASH + 1, last_cp))
            kept += [r for r in parts if r[0] <= r[1]]
        else:
            kept.append((first_cp, last_cp))
    if not kept:
        return "[^\\s\\S]", i
    return "[" + "".join(_class_range(a, b) for a, b in kept) + "]", i


def _class_range(lo: int, hi: int) -> str:
    if lo == hi:
        return _esc(chr(lo))
    return f"{_esc(chr(lo))}-{_esc(chr(hi))}"


def _class_char(glob: str, i: int) -> tuple[str, int]:
    if glob[i] == "\\":
        if i + 1 >= len(glob):
            raise _BadGlob("trailing backslash")
        return glob[i + 1], i + 2
    return glob[i], i + 1
