"""Experiment (not shipped): richer checkpoint headers, measured on eval-dev.

    .venv/bin/python bench/exp_headers.py SRC_HOME DST_HOME
    .venv/bin/python bench/eval_quality.py --home DST_HOME --legs-cache legs-hdr.json --no-latency

Copies the index in SRC_HOME (built by `bench/eval_quality.py --home SRC_HOME`) to
DST_HOME and re-embeds every checkpoint there with the header below in place of ctxd's
`path symbol` header, so the two indexes differ in nothing else. Result (docs/BENCHMARKS.md,
"Retrieval quality"): semantic-only MRR@10 +0.013, fused default -0.004, at the cost of
longer inputs; not shipped.

Checkpoint headers: one line of context embedded in front of a checkpoint's lines.

A checkpoint in the middle of a long method carries neither the method's signature nor
its docstring, so a question about what the method does cannot reach it. The header
gives every checkpoint, within a few dozen word pieces: its path and enclosing symbol,
and, when the checkpoint does not itself start at that definition, the definition's
signature line and the first sentence of its docstring (or of the comment above it);
a checkpoint outside any definition gets the first sentence of the module docstring.

Pure functions over a file's text and its symbols (`FileContext`).
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus
from ctxd.indexer.chunk.summary import string_at
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
        doc = string_at(lines, body) or _comment_above(lines, s.line - 1)
        defs.setdefault(qual, Summary(s.line, sig, first_sentence(doc) if doc else ""))
    module = string_at(lines, 0)
    if not module:
        i = 0
        while i < len(lines) and (lines[i].startswith("#!") or "coding" in lines[i][:30]):
            i += 1
        module = string_at(lines, i)
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


def main() -> None:
    from ctxd.indexer.embedder import SentenceTransformerEmbedder
    from ctxd.indexer.store.sqlite.store import Store, serialize_vector
    from ctxd.server.config import load_settings

    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    corpus = ensure_corpus()
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "index.db", dst / "index.db")
    store = Store.open(dst / "index.db")
    symbols: dict[str, list[Symbol]] = defaultdict(list)
    for path, name, kind, container, line, end in store.query(
            "SELECT path, name, kind, container, line, end_line FROM symbols"):
        symbols[str(path)].append(Symbol(str(name), str(kind), int(line), int(end),
                                         None if container is None else str(container)))
    contexts: dict[str, FileContext] = {}
    inputs: dict[str, str] = {}
    for path, start, symbol, text, digest in store.query(
            "SELECT path, start_line, symbol, text, hash FROM checkpoints "
            "ORDER BY path, start_line"):
        if path not in contexts:
            body = (corpus / str(path)).read_text(encoding="utf-8", errors="replace")
            contexts[path] = file_context(body, symbols[str(path)])
        if digest not in inputs:
            inputs[digest] = header(str(path), symbol, int(start), contexts[path]) + "\n" + text
    embedder = SentenceTransformerEmbedder(load_settings().embedding)
    ids = dict(store.query("SELECT hash, id FROM embeddings"))
    order = sorted(inputs, key=lambda h: len(inputs[h]), reverse=True)
    t0 = time.perf_counter()
    vectors = embedder.embed([inputs[h] for h in order])
    print(f"embedded {len(order)} inputs in {time.perf_counter() - t0:.1f} s")
    with store.transaction():
        for digest, vec in zip(order, vectors, strict=True):
            store.db.execute("DELETE FROM vec_embeddings WHERE rowid = ?", (ids[digest],))
            store.db.execute("INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                             (ids[digest], serialize_vector(vec.tolist())))


if __name__ == "__main__":
    main()
