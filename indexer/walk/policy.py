"""The walk's admission policy by name, size and secrets: rule tables and the verdicts.

`Policy` is the compiled part of the policy described in `indexer.walk.walker` (steps
1-5: built-in prunes, ignore files, sensitive excludes, user excludes and includes; step
7: the size limits and `READ_LIMIT`; step 9: secrets in a file's text): `dir_verdict` /
`file_verdict` / `size_verdict` / `secret_verdict` return why an entry is refused, as a
`Verdict` `(SkipReason, detail)`, or None. The built-in tables (`VCS_DIR_NAMES`,
`PRUNED_DIR_NAMES`, `VENV_MARKERS`, `HOME_MARKER`; the sensitive ones come from
`indexer.walk.secrets`) live here, as do `too_large`, `venv_verdict` and `stat_error`,
the verdicts on what a `stat` found.

`indexer.walk.walker.compile_policy` builds a `Policy` from `WalkOptions`; the walk, the
watcher's `FileFilter` (one path at a time) and `indexer.walk.judge` (the content steps)
apply the same one. It holds an `indexer.walk.gitindex.TrackedPaths` (data the walker
read) when git tracks paths.

Invariants: pure decisions over names, numbers and text (only `stat_error` looks at the
filesystem, to tell a dangling symlink from a vanished file); the first matching step
wins, in the same order for `walk` and `FileFilter`; built-in sensitive globs are
compiled once, case-insensitive; `sensitive_excludes = false` or a `sensitive_allow`
glob lifts the name and the content rules alike.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ctxd.indexer.models import HOME_MARKER, Skipped, SkipReason
from ctxd.indexer.walk.gitindex import TrackedPaths
from ctxd.indexer.walk.ignore import IgnoreFile, ignore_hit
from ctxd.indexer.walk.patterns import GlobMatcher, compile_globs
from ctxd.indexer.walk.secrets import (
    SENSITIVE_DIR_PATTERNS,
    SENSITIVE_FILE_PATTERNS,
    SENSITIVE_WORD_PATTERNS,
    Found,
    find_secrets,
    is_code_or_docs,
    is_data_or_config,
    mask_name,
    name_secret,
    redact,
)

__all__ = [
    "HOME_MARKER",
    "LINKED_FOLDER",
    "PRUNED_DIR_NAMES",
    "PRUNE_MARKERS",
    "READ_LIMIT",
    "SENSITIVE_DIR_PATTERNS",
    "SENSITIVE_FILE_PATTERNS",
    "SENSITIVE_WORD_PATTERNS",
    "VCS_DIR_NAMES",
    "VENV_MARKERS",
    "Policy",
    "Redacted",
    "Verdict",
    "bad_name",
    "home_verdict",
    "linked_folder_verdict",
    "refused_by_name",
    "stat_error",
    "too_large",
    "venv_verdict",
]

VCS_DIR_NAMES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
"""Version-control metadata: never descended into, never reported (also a `.git` file)."""

PRUNED_DIR_NAMES = frozenset(
    {
        # dependencies and virtualenvs
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        ".direnv",
        ".eggs",
        # tool caches: machine-written, never source
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        ".tox",
        ".nox",
        ".gradle",
        ".terraform",
        ".next",
        ".nuxt",
        ".parcel-cache",
        ".sass-cache",
    }
)
"""Directories pruned by name at any depth, reported once as `Skipped(dir, IGNORED)`.

Only names that are never hand-written source. `target/`, `build/`, `dist/` and `out/`
are left out on purpose: they are common real package or source names, and the
projects that generate them list them in `.gitignore` anyway.
"""

VENV_MARKERS = frozenset({"pyvenv.cfg", "conda-meta"})
"""A directory containing one of these is a Python virtualenv or conda env: pruned."""

PRUNE_MARKERS = VENV_MARKERS | {HOME_MARKER}
"""Entries that make a directory pruned (`venv_verdict`)."""

_SENSITIVE_FILES = compile_globs(SENSITIVE_FILE_PATTERNS, "sensitive", ignore_case=True)
_SENSITIVE_WORDS = compile_globs(SENSITIVE_WORD_PATTERNS, "sensitive", ignore_case=True)
_SENSITIVE_DIRS = compile_globs(SENSITIVE_DIR_PATTERNS, "sensitive", ignore_case=True)

Verdict = tuple[SkipReason, str]
"""A refusal: the reason and a human-readable detail."""


READ_LIMIT = 64 << 20
"""The most bytes of one file ctxd reads into memory (64 MiB), whatever `max_file_size`
says: with `max_file_size = 0` ("no limit") a larger file is TOO_LARGE, not read."""
READ_LIMIT_TEXT = (f"{READ_LIMIT} bytes (64 MiB), the most ctxd reads of one file, "
                   "even with max_file_size 0")


def too_large(size: int, limit: int) -> bool:
    """Whether a file of `size` bytes exceeds `limit` (0 = no limit; equal is allowed)."""
    return 0 < limit < size


@dataclass(frozen=True, slots=True)
class Policy:
    """The compiled policy (steps 1-5, 7 and 9); pure decisions, no I/O.

    Built by `indexer.walk.walker.compile_policy`, which validates the options first.
    """

    include: GlobMatcher
    exclude: GlobMatcher
    allow: GlobMatcher
    sensitive: bool
    max_file_size: int
    use_ignore_files: bool
    max_lexical_file_size: int = 0
    """Files kept for lexical search only may be this large (0 = no limit); never less
    than `max_file_size`."""
    tracked: TrackedPaths | None = None
    """What git tracks under the root (`indexer.walk.gitindex`), set per walk: a rule of a
    file git reads never ignores a tracked file, nor a folder holding one (git keeps
    tracked files whatever `.gitignore` says; `.ctxdignore` still refuses them)."""

    def _ignored(self, chain: tuple[IgnoreFile, ...], rel: str, is_dir: bool) -> str | None:
        hit = ignore_hit(chain, rel, is_dir)
        if hit is None:
            return None
        ig, rule = hit
        if ig.git and self.tracked is not None and self.tracked.keeps(rel, is_dir):
            return None
        return rule

    def kept_by_git(self, chain: tuple[IgnoreFile, ...], rel: str) -> str | None:
        """The rule of a file git reads that ignores the folder `rel` when git tracks files
        in it (the walk enters it for those alone: `ignore.excluded_folder`), else None."""
        if not chain or self.tracked is None:
            return None
        hit = ignore_hit(chain, rel, True)
        if hit is not None and hit[0].git and self.tracked.keeps(rel, True):
            return hit[1]
        return None

    def dir_verdict(
        self, rel: str, name: str, chain: tuple[IgnoreFile, ...], allowed: bool
    ) -> Verdict | None:
        """Why the directory `rel` is pruned (steps 1-4, by name), or None.

        `allowed`: a directory above matched `sensitive_allow`.
        """
        if name in VCS_DIR_NAMES:
            return SkipReason.IGNORED, "version-control directory"
        if name in PRUNED_DIR_NAMES:
            return SkipReason.IGNORED, f"built-in prune: {name}"
        if chain and (rule := self._ignored(chain, rel, True)):
            return SkipReason.IGNORED, rule
        if (
            self.sensitive
            and (pat := _SENSITIVE_DIRS.which_dir(rel, name))
            and not self.dir_allowed(rel, name, allowed)
        ):
            return SkipReason.SENSITIVE, f"sensitive pattern {pat!r}"
        if (self.sensitive and (what := name_secret(name))
                and not self.dir_allowed(rel, name, allowed)):
            return SkipReason.SENSITIVE, NAME_HOLDS + what
        if pat := self.exclude.which_dir(rel, name):
            return SkipReason.EXCLUDED, f"exclude pattern {pat!r}"
        return None

    def dir_allowed(self, rel: str, name: str, allowed: bool) -> bool:
        """Whether `sensitive_allow` covers the directory `rel` (or one above it)."""
        return allowed or self.allow.match_dir(rel, name)

    def file_verdict(
        self, rel: str, name: str, chain: tuple[IgnoreFile, ...], allowed: bool
    ) -> Verdict | None:
        """Why the file `rel` is refused by name (steps 2-5), or None."""
        if name in VCS_DIR_NAMES:
            return SkipReason.IGNORED, "version-control metadata"
        if chain and (rule := self._ignored(chain, rel, False)):
            return SkipReason.IGNORED, rule
        if (
            self.sensitive
            and (pat := _sensitive_name(rel, name))
            and not (allowed or self.allow.match_file(rel, name))
        ):
            return SkipReason.SENSITIVE, f"sensitive pattern {pat!r}"
        if (self.sensitive and (what := name_secret(name))
                and not (allowed or self.allow.match_file(rel, name))):
            return SkipReason.SENSITIVE, NAME_HOLDS + what
        if pat := self.exclude.which_file(rel, name):
            return SkipReason.EXCLUDED, f"exclude pattern {pat!r}"
        if self.include and not self.include.match_file(rel, name):
            return SkipReason.NOT_INCLUDED, "matches no include pattern"
        return None

    @property
    def lexical_limit(self) -> int:
        """The size limit of files kept for lexical search only (0 = none): the larger of
        `max_file_size` and `max_lexical_file_size`."""
        if self.max_file_size == 0 or self.max_lexical_file_size == 0:
            return 0
        return max(self.max_file_size, self.max_lexical_file_size)

    def size_verdict(self, size: int) -> Verdict | None:
        """Why a file of `size` bytes is refused before it is read (step 7), or None.

        A file over `max_file_size` but within `lexical_limit` is admitted: once read,
        `role_size_verdict` keeps it only if it is lexical-only. Whatever the limits say
        (0 included), a file over `READ_LIMIT` is refused."""
        if too_large(size, self.lexical_limit):
            if self.lexical_limit == self.max_file_size:
                return SkipReason.TOO_LARGE, f"{size} bytes > max_file_size {self.max_file_size}"
            return SkipReason.TOO_LARGE, (
                f"{size} bytes > max_lexical_file_size {self.lexical_limit} (and "
                f"max_file_size {self.max_file_size})")
        if too_large(size, READ_LIMIT):
            return SkipReason.TOO_LARGE, f"{size} bytes > {READ_LIMIT_TEXT}"
        return None

    def role_size_verdict(self, size: int, lexical_only: bool) -> Verdict | None:
        """Why a file read and classified is refused for its size (step 10), or None: over
        `max_file_size`, only a file kept for lexical search only stays."""
        if lexical_only or not too_large(size, self.max_file_size):
            return None
        return SkipReason.TOO_LARGE, (
            f"{size} bytes > max_file_size {self.max_file_size} (only files kept for lexical "
            f"search, such as lockfiles, may reach max_lexical_file_size {self.lexical_limit})")

    def allows(self, rel: str) -> bool:
        """Whether `sensitive_allow` covers the file `rel` or a directory above it."""
        if not self.allow:
            return False
        parts = rel.split("/")
        return self.allow.match_file(rel, parts[-1]) or any(
            self.allow.match_dir("/".join(parts[: i + 1]), parts[i])
            for i in range(len(parts) - 1))

    def secret_verdict(self, rel: str, text: str) -> Verdict | Redacted | None:
        """What the secrets in the text of the file `rel` do to it (step 9: a private key,
        a token, password hashes, a password in a URL; `indexer.walk.secrets`): None when
        it holds none (or `sensitive_allow` covers it); source code and docs are kept with
        each secret masked (`Redacted`); any other file is refused (a `Verdict`)."""
        if not self.sensitive or (found := find_secrets(text)) is None or self.allows(rel):
            return None
        if is_code_or_docs(rel) and (masked := redact(text, found)) is not None:
            return Redacted(masked, found)
        return SkipReason.SENSITIVE, f"holds {found.what}"


@dataclass(frozen=True, slots=True)
class Redacted:
    """Source code or docs holding secrets, kept with each secret masked (`secrets.redact`):
    the text indexed and served instead of the file's."""

    text: str
    found: Found


NAME_HOLDS = "its name holds "
"""How the detail of a path refused for a secret in a name starts."""


def refused_by_name(rel: str, verdict: Verdict) -> Skipped:
    """The `Skipped` of a path the name policy refused (`dir_verdict`, `file_verdict`); a
    path refused for a secret in one of its names (a file named after the token it holds)
    is given with that secret masked, so that no report or answer shows it."""
    if verdict[1].startswith(NAME_HOLDS):
        rel = mask_name(rel)
    return Skipped(rel, *verdict)


def _sensitive_name(rel: str, name: str) -> str | None:
    """The sensitive pattern the file's name matches: a key or credential file by name,
    or a data or config file named for secrets (never source code or docs)."""
    if pat := _SENSITIVE_FILES.which_file(rel, name):
        return pat
    if (pat := _SENSITIVE_WORDS.which_file(rel, name)) and is_data_or_config(name):
        return pat
    return None


def bad_name(rel: str) -> Skipped | None:
    """A BAD_NAME `Skipped` when the path `rel` (from `os` with surrogate escapes) is not
    valid UTF-8, its path shown with `\\xNN` escapes so it can be stored and printed."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return Skipped(shown, SkipReason.BAD_NAME,
                       "the name is not valid UTF-8; rename it to index it")
    return None


def home_verdict(root_real: str, real: str) -> Verdict | None:
    """IGNORED when the symlink-free path `real` (a symlink's target, inside the root
    `root_real`) lies in a ctxd index home: a folder between it and the root (both
    included) holds `HOME_MARKER`. A link's own path says nothing of where it leads, so
    the walk and `FileFilter` ask this of every target that a link led to."""
    folder = os.path.dirname(real)
    while True:
        if os.path.lexists(os.path.join(folder, HOME_MARKER)):
            return (SkipReason.IGNORED, f"symlink into a ctxd index home ({folder}): never "
                    "read")
        if folder == root_real or len(folder) <= len(root_real):
            return None
        folder = os.path.dirname(folder)


LINKED_FOLDER = "built-in prune: a link to the folder"
"""How the detail of a pruned link to a folder of the repository begins."""


def linked_folder_verdict(root_real: str, real: str) -> Verdict:
    """IGNORED for a symlink to a folder of the repository (`real`, symlink-free, inside
    `root_real`; not one of the link's own ancestors: that is a cycle). The walk reaches
    that folder's files at their own path, so following the link would index them twice
    and make every definition in them ambiguous to the code graph (`ctxd callers NAME`:
    "names 2 definitions"); git and ripgrep do not follow such a link either."""
    target = os.path.relpath(real, root_real).replace(os.sep, "/")
    return (SkipReason.IGNORED,
            f"{LINKED_FOLDER} {target!r} of this repository, whose files are indexed there")


def venv_verdict(names: frozenset[str] | set[str]) -> Verdict | None:
    """IGNORED when a directory's entry `names` include a `PRUNE_MARKERS` entry (a
    virtualenv, or ctxd's own index home), else None."""
    if HOME_MARKER in names:
        return SkipReason.IGNORED, "built-in prune: a ctxd index home (never read)"
    if found := VENV_MARKERS & names:
        return SkipReason.IGNORED, f"built-in prune: virtualenv ({min(found)})"
    return None


def stat_error(rel: str, exc: OSError, path: str) -> Skipped:
    """A `Skipped` for a path whose (followed) stat failed."""
    if exc.errno == errno.ELOOP:
        return Skipped(rel, SkipReason.SYMLINK_CYCLE, "symlink loop")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return Skipped(rel, SkipReason.NOT_REGULAR, f"dangling symlink -> {target}")
    return Skipped(rel, SkipReason.UNREADABLE, str(exc))
