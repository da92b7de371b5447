"""What the pipeline makes of one file before it is stored: its checkpoints
(`Checkpoint`: a chunk, the text embedded for it, that text's hash and word pieces), the
file's summary with its hash, and its code graph (`indexer.graph`), as one `ChunkedFile`.

`checkpoints_of` chunks a file (`indexer.chunk.chunker`) and makes sure every embedding
input fits the model: the input is the checkpoint's path and symbol as a header, then its
lines (`embedding_input`), and a chunk whose header could push it over the model's limit
is split again. A vector belongs to the hash of its input (`content_hash`), so the same
lines at another path are a different input, and a text already embedded anywhere in the
index is never embedded again. Pure, apart from the token counter it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

import xxhash

from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file, split_chunk
from ctxd.indexer.chunk.summary import file_summary
from ctxd.indexer.chunk.syntax import ParseBudgetExceeded, ParsedSource, parse_source
from ctxd.indexer.chunk.tokens import TokenCounter
from ctxd.indexer.graph import FileGraph, encode, graph_of, link_keys
from ctxd.indexer.graph.specs import SPECS
from ctxd.indexer.graph.worker import GraphWorker, Pending
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.records import NO_GRAPH, NO_SUMMARY, GraphRow, Summary

__all__ = ["Checkpoint", "ChunkedFile", "checkpoints_of", "content_hash", "embedding_input",
           "graph_row", "summary_of"]


def content_hash(text: str) -> str:
    """A fast 128-bit content hash (xxh3), hex."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))


def embedding_input(path: str, chunk: Chunk) -> str:
    """The text embedded for a checkpoint: its path and symbol as a header, then its lines.

    The header lets a question that names a module or function find it; it is part of
    the hash, so the same lines at another path are a different input.
    """
    head = f"{path} {chunk.symbol}" if chunk.symbol else path
    return f"{head}\n{chunk.text}"


def summary_of(path: str, language: str, text: str, symbols: list[Symbol]) -> Summary:
    """A file's summary (`indexer.chunk.summary`) with its hash, or `NO_SUMMARY`. The hash
    lets an identical summary reuse a vector; it is of a marked text, so a dry run's
    count never mistakes a summary for a checkpoint text."""
    body = file_summary(path, language, text, symbols)
    return NO_SUMMARY if body is None else Summary(body, content_hash("summary\n" + body))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A chunk as the pipeline writes it: with the hash of its embedding input (the key of
    its vector), the input itself, and the input's word pieces when known (else None)."""

    chunk: Chunk
    hash: str
    input: str
    tokens: int | None


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """What the pipeline makes of a file's `FileChunks`: its checkpoints, each fitting the
    model, with its symbols, and why a code file was cut into line windows (or None)."""

    language: str
    checkpoints: list[Checkpoint]
    symbols: list[Symbol]
    windows_reason: str | None = None
    graph: GraphRow | Pending = NO_GRAPH
    """The file's code graph, encoded (`indexer.graph`; `NO_GRAPH` for a file without), or
    on its way from the graph helper (`indexer.graph.worker`: `Pending.row()` gives it)."""


def checkpoints_of(path: str, text: str, options: ChunkOptions, count_tokens: TokenCounter,
                   input_limit: int, *, tokens_add_up: bool,
                   graphs: GraphWorker | None = None) -> ChunkedFile:
    """Chunk a file (`FileChunks`) and make sure every embedding input fits `input_limit`.

    The chunker keeps each chunk's text within `options.max_tokens`, and word-piece counts
    add up across the header's newline, so only the headers are counted; a chunk is
    re-split only when its header could push it over the limit. Each `Checkpoint`'s word
    pieces are the header's plus the chunker's when the counter adds up over lines
    (`tokens_add_up`; None otherwise, and for a re-split part: a dry run counts those
    itself). `graphs`: the code graph is made by that helper process, when it is ready.
    """
    fc = chunk_file(path, text, options, count_tokens)
    heads = [embedding_input(path, c).split("\n", 1)[0] for c in fc.chunks]
    head_tokens = count_tokens(heads) if heads else []
    out: list[Checkpoint] = []
    for chunk, n_head, n_text in zip(fc.chunks, head_tokens, fc.tokens, strict=True):
        parts: list[tuple[Chunk, int | None]] = [(chunk, n_text)]
        if n_head + options.max_tokens > input_limit:
            n_body = n_text if tokens_add_up else count_tokens([chunk.text])[0]
            budget = max(8, input_limit - n_head)
            if n_head + n_body > input_limit:
                parts = [(p, None) for p in split_chunk(chunk, budget, count_tokens)]
        for part, n in parts:
            inp = embedding_input(path, part)
            tokens = n_head + n if tokens_add_up and n is not None else None
            out.append(Checkpoint(part, content_hash(inp), inp, tokens))
    return ChunkedFile(fc.language, out, fc.symbols, fc.windows_reason,
                       _file_graph(path, fc.language, fc.parsed, graphs))


def _file_graph(path: str, language: str, parsed: object | None,
                graphs: GraphWorker | None) -> GraphRow | Pending:
    """A chunked file's graph row: made by the graph helper where there is one, ready,
    and the chunker parsed the file, else here."""
    if graphs is not None and language in SPECS and isinstance(parsed, ParsedSource):
        pending = graphs.submit(language, parsed, path)
        if pending is not None:
            return pending
    return _graph_row(path, language, parsed)


def _graph_row(path: str, language: str, parsed: object | None) -> GraphRow:
    """The graph row of the file at `path` in its repository (its import keys depend on
    it: `indexer.graph.links`); an empty graph for a code file that could not be parsed
    (so that `graph_row`'s backfill knows it was seen), `NO_GRAPH` for other files."""
    if language not in SPECS:
        return NO_GRAPH
    graph = graph_of(language, parsed) or FileGraph(language)
    return GraphRow(encode(graph), tuple(link_keys(graph, path)))


def graph_row(path: str, language: str, text: str, budget_ms: int) -> GraphRow:
    """The graph row of the stored file at `path`, parsed again (the backfill of files
    indexed before the code graph existed, or by an older extractor), within the
    chunker's parse budget."""
    try:
        parsed = parse_source(language, text, budget_s=budget_ms / 1000 if budget_ms > 0
                              else None)
    except (ParseBudgetExceeded, ValueError, RuntimeError, RecursionError):
        parsed = None
    return _graph_row(path, language, parsed)
