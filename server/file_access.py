"""Which files a request may read, and the error that says why one is refused.

`refusal(repository, path, skipped)` turns the `Skipped` verdict of
`indexer.walk.servable.read_servable` / `name_verdict` into the error a caller reads: a
`FileRefused` (`validation_error`) that names the rule and says how to allow the file for
what the index keeps out on purpose (likely secrets, ignored, excluded, not included,
over-size and binary files), a `FileNotFound` (`NOT_FOUND`) for what is not there to read
(missing, a directory, outside the root, unreadable).

Pure: builds errors, reads nothing.
"""

from __future__ import annotations

import re

from ctxd.indexer.errors import CtxdError, FileNotFound, FileRefused
from ctxd.indexer.models import Skipped, SkipReason
from ctxd.indexer.walk.policy import LINKED_FOLDER, READ_LIMIT, SENSITIVE_DIR_PATTERNS
from ctxd.indexer.walk.walker import MAX_FILE_SIZE_LIMIT

__all__ = ["not_found", "refusal"]

_BUILT_IN = ("built-in prune", "version-control")


def not_found(repository: str, path: str, why: str = "") -> FileNotFound:
    """The contract's `File not found: {repository}/{path}`."""
    details = {"field": "path", "repository": repository, "path": path}
    if why:
        details["reason"] = why
    return FileNotFound(
        f"File not found: {repository}/{path}",
        hint="Use `search_files` to find the right path (paths are relative to the "
        "repository root).",
        details=details,
    )


def _why_and_how(skipped: Skipped, path: str) -> tuple[str, str]:
    """(why the index keeps the file out, how to allow it) for a refusal reason."""
    detail = skipped.detail
    match skipped.reason:
        case SkipReason.SENSITIVE:
            folder = [p for p in SENSITIVE_DIR_PATTERNS if repr(p) in detail]
            glob = folder[0] if folder else path
            return (f"it looks like a secret ({detail})",
                    "ctxd never indexes or serves likely secrets. If this file holds none, add "
                    f"a glob for it to `sensitive_allow` under [walk] in config.toml (e.g. "
                    f"sensitive_allow = [\"{glob}\"]) and re-index the repository.")
        case SkipReason.IGNORED if detail.startswith(LINKED_FOLDER):
            target = detail[len(LINKED_FOLDER):].split(" of this repository")[0].strip()
            return (f"it lies under a link to another folder of the repository ({detail})",
                    f"Ask for it at its own path, under {target} (`ctxd files` lists the "
                    "repository's paths).")
        case SkipReason.IGNORED if detail.startswith(_BUILT_IN):
            return (f"it lies in a folder ctxd never indexes ({detail})",
                    "Version-control metadata, dependency folders, virtualenvs and tool "
                    "caches are never indexed or served.")
        case SkipReason.IGNORED:
            return (f"an ignore file excludes it ({detail})",
                    f"To serve it, un-ignore it in the repository's .ctxdignore (a line "
                    f"`!{path}`) or set `use_gitignore = false` under [walk] in config.toml, "
                    "then re-index the repository.")
        case SkipReason.EXCLUDED:
            return (f"the repository was indexed with an exclude pattern that matches it "
                    f"({detail})",
                    "Re-index the repository without that pattern (`ctxd index ROOT --exclude "
                    "...` or `index_repository` with other `exclude_patterns`).")
        case SkipReason.NOT_INCLUDED:
            return ("the repository was indexed with include patterns and none matches it",
                    "Re-index the repository with an include pattern that matches it, or with "
                    "none.")
        case SkipReason.TOO_LARGE:
            return (f"it is larger than the repository's size limit ({detail})",
                    _too_large_how(detail))
        case _:
            return (f"it is not a text file ({detail})",
                    "Only UTF-8 text files are indexed and served.")


def _too_large_how(detail: str) -> str:
    """What lets a file refused for its size in: only a limit that can reach its size
    (the detail starts with it: `N bytes > ...`)."""
    size = int(m[1]) if (m := re.match(r"(\d+) bytes", detail)) else 0
    if size > READ_LIMIT:
        return (f"ctxd reads no file over {READ_LIMIT} bytes (64 MiB), whatever the "
                "settings: search it with `rg`, or open it in an editor.")
    if size > MAX_FILE_SIZE_LIMIT:
        return (f"`max_file_size` goes up to {MAX_FILE_SIZE_LIMIT} bytes only; a file kept "
                "for lexical search only (a lockfile, a data file, a bundle) may reach "
                "`max_lexical_file_size` under [walk] in config.toml (at most "
                f"{READ_LIMIT} bytes): raise it and re-index the repository.")
    return ("Re-index the repository with a larger `max_file_size` (at most "
            f"{MAX_FILE_SIZE_LIMIT} bytes), e.g. `ctxd index ROOT --max-file-size "
            f"{MAX_FILE_SIZE_LIMIT}`.")


def refusal(repository: str, path: str, skipped: Skipped) -> CtxdError:
    """The error for a file request the walk's policy refuses (see the module docstring)."""
    if skipped.reason in (SkipReason.OUTSIDE_ROOT, SkipReason.NOT_REGULAR,
                          SkipReason.UNREADABLE, SkipReason.SYMLINK_CYCLE):
        return not_found(repository, path, f"{skipped.reason.value}: {skipped.detail}")
    why, how = _why_and_how(skipped, skipped.path)
    return FileRefused(
        f"File not served: {repository}/{path}: {why}; ctxd serves only files it would index",
        hint=how,
        details={"field": "path", "repository": repository, "path": path,
                 "reason": skipped.reason.value, "rule": skipped.detail},
    )
