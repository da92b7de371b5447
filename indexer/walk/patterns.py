"""Glob compilation for include, exclude and sensitive-file patterns.

Provides `compile_globs(patterns, field) -> GlobMatcher`, a pure function that validates
and compiles user globs once; the walker (`indexer/walk/walker.py`) and the config loader call
it, and it calls nothing but `re`.

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

Invariants: compiling is the only place a pattern can fail; a compiled matcher never
raises; an empty matcher matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ctxd.indexer.errors import ValidationError

__all__ = ["GlobMatcher", "compile_globs", "glob_to_regex"]

_GLOB_HINT = (
    "Globs support *, ?, [a-z], [!a-z] and ** (any number of path segments); "
    "escape a literal '[', '*' or '?' with a backslash."
)


class _BadGlob(ValueError):
    """Raised by the translator; turned into a ValidationError by `compile_globs`."""


@dataclass(frozen=True, slots=True)
class _Compiled:
    """One pattern, translated."""

    pattern: str
    regex: re.Pattern[str]
    """Full-match regex over a basename or a repo-relative path."""
    dir_regex: re.Pattern[str] | None
    """For `P/**` patterns: the regex of `P`, matched against directories."""
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
    _file_path: re.Pattern[str] | None
    _file_name: re.Pattern[str] | None
    _dir_path: re.Pattern[str] | None
    _dir_name: re.Pattern[str] | None

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
            if not item.dir_only and _matches(item, item.regex, rel_path, name):
                return item.pattern
        return None  # pragma: no cover - the combined regex said yes

    def which_dir(self, rel_path: str, name: str | None = None) -> str | None:
        """The first pattern that matches the directory `rel_path`, or None."""
        if name is None:
            name = rel_path.rpartition("/")[2]
        if not self.match_dir(rel_path, name):
            return None
        for item in self._items:
            for regex in (item.regex, item.dir_regex):
                if regex is not None and _matches(item, regex, rel_path, name):
                    return item.pattern
        return None  # pragma: no cover - the combined regex said yes


def _hit(regex: re.Pattern[str] | None, text: str) -> bool:
    return regex is not None and regex.fullmatch(text) is not None


def _matches(item: _Compiled, regex: re.Pattern[str], rel_path: str, name: str) -> bool:
    if regex.fullmatch(rel_path):
        return True
    return not item.anchored and regex.fullmatch(name) is not None


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
    flags = re.IGNORECASE if ignore_case else 0
    items: list[_Compiled] = []
    pats = tuple(patterns)
    for pat in pats:
        try:
            items.append(_compile_one(pat, flags))
        except _BadGlob as exc:
            raise ValidationError(
                f"invalid {label} pattern",
                hint=f"Fix the pattern {pat!r} ({exc}). {_GLOB_HINT}",
                details={"field": field, "pattern": pat, "reason": str(exc)},
            ) from None
    files = [i for i in items if not i.dir_only]
    dir_sources = [i.regex.pattern for i in items]
    dir_sources += [i.dir_regex.pattern for i in items if i.dir_regex is not None]
    dir_name_sources = [i.regex.pattern for i in items if not i.anchored]
    dir_name_sources += [
        i.dir_regex.pattern for i in items if i.dir_regex is not None and not i.anchored
    ]
    return GlobMatcher(
        pats,
        tuple(items),
        _any([i.regex.pattern for i in files], flags),
        _any([i.regex.pattern for i in files if not i.anchored], flags),
        _any(dir_sources, flags),
        _any(dir_name_sources, flags),
    )


def _any(sources: list[str], flags: int) -> re.Pattern[str] | None:
    if not sources:
        return None
    return re.compile("|".join(f"(?:{s})" for s in sources), flags)


def _compile_one(pat: str, flags: int) -> _Compiled:
    if not isinstance(pat, str):
        raise _BadGlob("a pattern must be a string")
    if not pat or pat in ("/", "//"):
        raise _BadGlob("empty pattern")
    if "\x00" in pat:
        raise _BadGlob("NUL character")
    body = pat
    anchored = body.startswith("/")
    if anchored:
        body = body[1:]
    dir_only = body.endswith("/") and not body.endswith("\\/")
    if dir_only:
        body = body[:-1]
    if not body:
        raise _BadGlob("empty pattern")
    regex = re.compile(glob_to_regex(body), flags)
    dir_regex = None
    if body.endswith("/**") and len(body) > 3:
        dir_regex = re.compile(glob_to_regex(body[:-3]), flags)
    return _Compiled(pat, regex, dir_regex, anchored, dir_only)


def glob_to_regex(glob: str) -> str:
    """Translate one glob (no leading/trailing-slash markers) to a full-match regex source.

    Raises:
        ValueError: malformed glob (unterminated `[`, bad range, trailing backslash).
    """
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            seg_start = i == 0 or glob[i - 1] == "/"
            seg_end = j == n or glob[j] == "/"
            if j - i >= 2 and seg_start and seg_end:
                if j == n:
                    # `**` at the end: everything (after `x/`, one or more characters).
                    out.append(".+" if i > 0 else ".*")
                    i = j
                else:
                    # `**/`: zero or more whole segments.
                    out.append("(?:.*/)?")
                    i = j + 1
            else:
                out.append("[^/]*")
                i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, i = _char_class(glob, i)
            out.append(cls)
        elif c == "\\":
            if i + 1 >= n:
                raise _BadGlob("trailing backslash")
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _char_class(glob: str, start: int) -> tuple[str, int]:
    """Translate the class starting at `glob[start] == '['`; return (regex, next index)."""
    i, n = start + 1, len(glob)
    negate = i < n and glob[i] in "!^"
    if negate:
        i += 1
    parts: list[str] = []
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
            parts.append(f"{_esc_class(lo)}-{_esc_class(hi)}")
        else:
            parts.append(_esc_class(lo))
    body = "".join(parts)
    if negate:
        return f"[^/{body}]", i
    return f"(?!/)[{body}]", i


def _class_char(glob: str, i: int) -> tuple[str, int]:
    if glob[i] == "\\":
        if i + 1 >= len(glob):
            raise _BadGlob("trailing backslash")
        return glob[i + 1], i + 2
    return glob[i], i + 1


def _esc_class(c: str) -> str:
    return "\\" + c if c in "\\]-^[" else c
