"""The walk's admission policy by name and size: built-in rule tables and the verdicts.

`Policy` is the compiled, name-based part of the policy described in `indexer.walk.walker`
(steps 1-5: built-in prunes, ignore files, sensitive excludes, user excludes and
includes; step 7: the size limit): `dir_verdict` / `file_verdict` / `size_verdict`
return why an entry is refused, as a `Verdict` `(SkipReason, detail)`, or None. The
built-in tables (`VCS_DIR_NAMES`, `PRUNED_DIR_NAMES`, `VENV_MARKERS`, `HOME_MARKER`,
`SENSITIVE_FILE_PATTERNS`, `SENSITIVE_DIR_PATTERNS`) live here, as do `too_large`,
`venv_verdict` and `stat_error`, the verdicts on what a `stat` found.

Callers: `indexer.walk.walker` (`compile_policy` builds a `Policy` from `WalkOptions`;
`walk` applies it) and `indexer.walk.filefilter` (the same policy, one path at a time);
`server.changes` reads the tables. Calls `indexer.walk.patterns` and `indexer.walk.ignore`.

Invariants: pure decisions over names and numbers (only `stat_error` looks at the
filesystem, to tell a dangling symlink from a vanished file); the first matching step
wins, in the same order for `walk` and `FileFilter`; built-in sensitive globs are
compiled once, case-insensitive.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ctxd.indexer.models import HOME_MARKER, Skipped, SkipReason
from ctxd.indexer.walk.ignore import IgnoreFile, ignored_by
from ctxd.indexer.walk.patterns import GlobMatcher, compile_globs

__all__ = [
    "HOME_MARKER",
    "PRUNED_DIR_NAMES",
    "PRUNE_MARKERS",
    "SENSITIVE_DIR_PATTERNS",
    "SENSITIVE_FILE_PATTERNS",
    "VCS_DIR_NAMES",
    "VENV_MARKERS",
    "Policy",
    "Verdict",
    "bad_name",
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

SENSITIVE_FILE_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.backup",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*credentials*",
    "*secret*",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
)
"""Built-in sensitive file globs (case-insensitive), matched like user globs."""

SENSITIVE_DIR_PATTERNS: tuple[str, ...] = (".aws", ".ssh", ".gnupg", ".kube", ".azure")
"""Built-in sensitive directories (case-insensitive): pruned with one `Skipped`."""

_SENSITIVE_FILES = compile_globs(SENSITIVE_FILE_PATTERNS, "sensitive", ignore_case=True)
_SENSITIVE_DIRS = compile_globs(SENSITIVE_DIR_PATTERNS, "sensitive", ignore_case=True)

Verdict = tuple[SkipReason, str]
"""A refusal: the reason and a human-readable detail."""


def too_large(size: int, limit: int) -> bool:
    """Whether a file of `size` bytes exceeds `limit` (0 = no limit; equal is allowed)."""
    return 0 < limit < size


@dataclass(frozen=True, slots=True)
class Policy:
    """The compiled name-based policy (steps 1-5 and 7); pure decisions, no I/O.

    Built by `indexer.walk.walker.compile_policy`, which validates the options first.
    """

    include: GlobMatcher
    exclude: GlobMatcher
    allow: GlobMatcher
    sensitive: bool
    max_file_size: int
    use_ignore_files: bool

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
        if chain and (rule := ignored_by(chain, rel, True)):
            return SkipReason.IGNORED, rule
        if (
            self.sensitive
            and (pat := _SENSITIVE_DIRS.which_dir(rel, name))
            and not self.dir_allowed(rel, name, allowed)
        ):
            return SkipReason.SENSITIVE, f"sensitive pattern {pat!r}"
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
        if chain and (rule := ignored_by(chain, rel, False)):
            return SkipReason.IGNORED, rule
        if (
            self.sensitive
            and (pat := _SENSITIVE_FILES.which_file(rel, name))
            and not (allowed or self.allow.match_file(rel, name))
        ):
            return SkipReason.SENSITIVE, f"sensitive pattern {pat!r}"
        if pat := self.exclude.which_file(rel, name):
            return SkipReason.EXCLUDED, f"exclude pattern {pat!r}"
        if self.include and not self.include.match_file(rel, name):
            return SkipReason.NOT_INCLUDED, "matches no include pattern"
        return None

    def size_verdict(self, size: int) -> Verdict | None:
        """Why a file of `size` bytes is refused (step 7), or None."""
        if too_large(size, self.max_file_size):
            return SkipReason.TOO_LARGE, f"{size} bytes > max_file_size {self.max_file_size}"
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
