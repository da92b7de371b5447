"""Reads a file the walk admitted and judges it by its text: the walk's steps 8-10.

`FileJudge(root, opts).judge(entry)` returns the file's text with its role
(`indexer.walk.textclass.Role`: embedded, or kept for lexical search only, and why), or
the `Skipped` that refuses it:

8. `indexer.walk.reader.read_file`: NUL bytes or invalid UTF-8 -> BINARY, OSError ->
   UNREADABLE, grown past the limit -> TOO_LARGE;
9. a secret in the text (`Policy.secret_verdict`: a private key, a token, password
   hashes, a password in a URL): source code and docs are kept with every secret masked
   character for character (the text indexed, chunked and served is the masked one, its
   digest that text's), any other file -> SENSITIVE; unless `sensitive_excludes = false`
   or `sensitive_allow` covers it;
10. the role (`textclass.classify`), then the size by role (`Policy.role_size_verdict`):
   a file over `max_file_size` stays only if it is lexical-only (a lockfile, a bundle, ...),
   up to `max_lexical_file_size`, which the walk already checked.

The pipeline judges every file it reads with it, and so does a file request (`ctxd cat`,
`file_content`, through `indexer.walk.servable`), so a request is refused exactly what
the index refuses.

Invariants: one judge per run and repository (its place caches are per root); the
content checks look at the head and tail of a large file, and the secret checks start
with substring scans, so judging costs little next to reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import xxhash

from ctxd.indexer.models import FileEntry, Skipped
from ctxd.indexer.walk.buildout import BuildDirs
from ctxd.indexer.walk.policy import Policy, Redacted
from ctxd.indexer.walk.reader import read_file
from ctxd.indexer.walk.textclass import Role, VendorDirs, classify
from ctxd.indexer.walk.translations import Translations
from ctxd.indexer.walk.walker import WalkOptions, compile_policy

__all__ = ["FileJudge", "Judged"]


@dataclass(frozen=True, slots=True)
class Judged:
    """A file read and admitted: its text, its role and why it has that role."""

    text: str
    digest: str
    """`indexer.pipeline.content_hash(text)`, computed as the file was read."""
    role: Role
    why: str
    redacted: str | None = None
    """Source code or docs that held secrets: the first one (`a PEM private key (line
    3)`); `text` has every one masked (`indexer.walk.secrets.redact`)."""


class FileJudge:
    """Steps 8-10 of the walk for the files of one repository."""

    def __init__(self, root: Path, opts: WalkOptions, policy: Policy | None = None) -> None:
        """`policy`: the compiled `opts` when the caller has them (else compiled here).

        Raises:
            ValidationError: bad options (as `indexer.walk.walker.walk`).
        """
        self.policy = policy or compile_policy(opts)
        self.rules = opts.text_rules()
        self.vendor = VendorDirs(root)
        self.built = BuildDirs(root)
        self.translations = Translations(root)

    def judge(self, entry: FileEntry) -> Judged | Skipped:
        """Read `entry` and judge it (see the module docstring)."""
        got = read_file(entry, max_size=self.policy.lexical_limit)
        if isinstance(got, Skipped):
            return got
        text, digest, redacted = got.text, got.digest, None
        verdict = self.policy.secret_verdict(entry.path, text)
        if isinstance(verdict, Redacted):
            text, redacted = verdict.text, verdict.found.what
            digest = xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))
        elif verdict is not None:
            return Skipped(entry.path, *verdict)
        role, why = classify(entry.path, text, self.rules, self.vendor, self.built,
                              self.translations)
        size = max(entry.size, len(text))  # it may have grown since the walk's stat
        if verdict := self.policy.role_size_verdict(size, role.lexical_only):
            return Skipped(entry.path, *verdict)
        return Judged(text, digest, role, why, redacted)
