"""Checkpoint headers: one line of context embedded in front of a checkpoint's lines.

A checkpoint in the middle of a long method carries neither the method's signature nor
its docstring, so a question about what the method does cannot reach it. The header
gives every checkpoint, within a few dozen word pieces: its path and enclosing symbol,
and, when the checkpoint does not itself start at that definition, the definition's
signature line and the first sentence of its docstring (or of the comment above it);
a checkpoint outside any definition gets the first sentence of the module docstring.

Pure functions over a file's text and its symbols (`FileContext`); the pipeline builds
one context per file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxd.indexer.models import Symbol

DOC_WORDS = 16
"""The docstring summary is cut to this many words."""
SIGNATURE_CHARS = 100
"""The signature line is cut to this many characters."""


@dataclass(frozen=True, slots=True)
class Summary:
    """A definition's first line and docstring summary."""

    line: int
    signature: str
    doc: str


@dataclass(frozen=True, slots=True)
class FileContext:
    """What headers need to know about one file."""

    definitions: dict[str, Summary] = field(default_factory=dict)
    """Qualified name (`Retry.increment`) -> its summary."""
    module_doc: str = ""


_QUOTES = re.compile(r'^[rRbBuU]{0,2}("""|\'\'\')')
_COMMENT = re.compile(r"^\s*(#|//|/\*+|\*|--)\s?")


def first_sentence(text: str, words: int = DOC_WORDS) -> str:
    """The first sentence (or paragraph) of a docstring, at most `words` words."""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(para.split())
    m = re.search(r"(?<=[.!?])\s", flat)
    if m:
        flat = flat[: m.start()]
    parts = flat.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def docstring_at(lines: Sequence[str], start: int) -> str:
    """The triple-quoted string starting at or after 0-based line `start` (skipping blank
    lines), or ""."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return ""
    first = lines[i].strip()
    m = _QUOTES.match(first)
    if not m:
        return ""
    quote = m.group(1)
    body = first[m.end():]
    if quote in body:
        return body[: body.index(quote)]
    out = [body]
    for line in lines[i + 1 : i + 40]:
        if quote in line:
            out.append(line[: line.index(quote)])
            break
        out.append(line)
    return "\n".join(out)


def _comment_above(lines: Sequence[str], line: int) -> str:
    """The comment block right above 0-based `line` (decorators skipped), or ""."""
    i = line - 1
    while i >= 0 and lines[i].lstrip().startswith("@"):
        i -= 1
    out: list[str] = []
    while i >= 0 and _COMMENT.match(lines[i]) and lines[i].strip():
        out.append(_COMMENT.sub("", lines[i], count=1).rstrip("*/ "))
        i -= 1
    return "\n".join(reversed(out))


def _signature(lines: Sequence[str], line: int, name: str) -> tuple[str, int]:
    """(The definition's first line, the 0-based line its body starts after)."""
    i = line
    for j in range(line, min(line + 6, len(lines))):
        if name in lines[j] and not lines[j].lstrip().startswith("@"):
            i = j
            break
    sig = lines[i].strip() if i < len(lines) else ""
    end = i
    # A signature spread over several lines ends at the line ending with ':' (Python).
    while end < min(i + 12, len(lines) - 1) and not lines[end].rstrip().endswith((":", "{")):
        end += 1
    if len(sig) > SIGNATURE_CHARS:
        sig = sig[:SIGNATURE_CHARS] + " ..."
    return sig, end + 1


def file_context(text: str, symbols: Sequence[Symbol]) -> FileContext:
    """Signatures and docstring summaries of a file's definitions, and its module doc."""
    lines = text.split("\n")
    defs: dict[str, Summary] = {}
    for s in symbols:
        if s.kind in ("heading", "section") or s.line < 1:
            continue
        qual = f"{s.container}.{s.name}" if s.container else s.name
        sig, body = _signature(lines, s.line - 1, s.name)
        doc = docstring_at(lines, body) or _comment_above(lines, s.line - 1)
        defs.setdefault(qual, Summary(s.line, sig, first_sentence(doc) if doc else ""))
    module = docstring_at(lines, 0)
    if not module:
        i = 0
        while i < len(lines) and (lines[i].startswith("#!") or "coding" in lines[i][:30]):
            i += 1
        module = docstring_at(lines, i)
    return FileContext(defs, first_sentence(module) if module else "")


def header(path: str, symbol: str | None, start_line: int, context: FileContext | None) -> str:
    """The one-line header of a checkpoint (see the module docstring)."""
    head = f"{path} {symbol}" if symbol else path
    if context is None:
        return head
    if symbol is None:
        return f"{head}: {context.module_doc}" if context.module_doc else head
    summary = context.definitions.get(symbol)
    if summary is None or start_line <= summary.line:
        return head
    extra = " ".join(p for p in (summary.signature, summary.doc) if p)
    return f"{head}: {extra}" if extra else head
