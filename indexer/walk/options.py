"""What to walk: `WalkOptions` and the size limits, without the walker itself.

Settings (`server.config`) and `ctxd --help` import these; the walker, its ignore files
and glob engines load only when something walks (`indexer.walk.walker` re-exports them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxd.indexer.walk.textclass import TextRules

__all__ = ["DEFAULT_MAX_FILE_SIZE", "DEFAULT_MAX_LEXICAL_FILE_SIZE", "MAX_FILE_SIZE_LIMIT",
           "MAX_LEXICAL_FILE_SIZE_LIMIT", "WalkOptions"]

MAX_FILE_SIZE_LIMIT = 10_485_760
"""The largest `max_file_size` a caller may ask for (10 MiB, the contract's maximum)."""
DEFAULT_MAX_FILE_SIZE = 1_048_576
"""1 MiB: most source files are far smaller; larger ones are mostly generated."""
DEFAULT_MAX_LEXICAL_FILE_SIZE = 16_777_216
"""16 MiB: lockfiles, bundles and vendored files, kept for lexical search only, run to
megabytes (a 1.7 MB `package-lock.json` is common); the trigram index takes them
(docs/BENCHMARKS.md, issue 24)."""
MAX_LEXICAL_FILE_SIZE_LIMIT = 67_108_864
"""The largest `max_lexical_file_size` a caller may ask for (64 MiB)."""

@dataclass(frozen=True, slots=True)
class WalkOptions:
    """What to walk: globs, size limit, and which built-in rules apply."""

    include_patterns: tuple[str, ...] = ()
    """Globs; empty = every file. Files only."""
    exclude_patterns: tuple[str, ...] = ()
    """Globs; win over includes; a matching directory is pruned."""
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    """Bytes; 0 = no limit; at most `MAX_FILE_SIZE_LIMIT`."""
    max_lexical_file_size: int = DEFAULT_MAX_LEXICAL_FILE_SIZE
    """Bytes a file kept for lexical search only (a lockfile, a bundle, ...) may reach;
    0 = no limit; never less than `max_file_size`; at most `MAX_LEXICAL_FILE_SIZE_LIMIT`."""
    sensitive_excludes: bool = True
    """Apply `indexer.walk.policy.SENSITIVE_FILE_PATTERNS` / `SENSITIVE_DIR_PATTERNS`."""
    sensitive_allow: tuple[str, ...] = ()
    """Globs that lift the sensitive excludes for the files they match, and for whole
    directories they match (everything under them), like excludes prune directories."""
    use_gitignore: bool = True
    """Honour `.gitignore` (nested), `.ctxdignore` and `.git/info/exclude`."""
    lexical_only_rules: bool = True
    """Keep lockfiles, vendored trees, SVG, minified/bundled and long-line files,
    certificates and data blobs greppable but never embedded (`indexer.walk.textclass`)."""
    lexical_only_patterns: tuple[str, ...] = ()
    """More globs whose files are kept greppable only."""
    embed_allow: tuple[str, ...] = ()
    """Globs embedded whatever the built-in rules say (a file, or a directory and all
    under it: `["vendor/**"]`, `["third_party"]`)."""

    def text_rules(self) -> TextRules:
        """The compiled `lexical_only_*` / `embed_allow` rules (validated globs)."""
        from ctxd.indexer.walk.textclass import TextRules

        return TextRules.build(self.lexical_only_rules, self.lexical_only_patterns,
                               self.embed_allow)
