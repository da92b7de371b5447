"""How big chunks are: `ChunkOptions`, without the chunker itself.

Settings (`server.config`) and `ctxd --help` import it; tree-sitter and the chunker load
only when something chunks (`indexer.chunk.chunker` re-exports it).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChunkOptions"]


@dataclass(frozen=True, slots=True)
class ChunkOptions:
    """How big chunks are, in model word pieces (without special tokens)."""

    max_tokens: int = 224
    """Hard cap for a chunk's text (the pipeline adds a short header)."""
    target_tokens: int = 160
    """Small siblings merge up to about this size; long bodies are cut into parts near it."""
    min_tokens: int = 24
    """A piece smaller than this merges with its neighbour (up to `max_tokens`)."""
    window_overlap_lines: int = 3
    """Lines shared by consecutive windows of non-code text (at most a quarter of a
    window's lines, so that windows advance by most of their size)."""
    parse_budget_ms: int = 10_000
    """The most time one code file's syntax parse (tree-sitter and the walk over its tree)
    may take before the file is cut into line windows instead (0 = no limit); the files it
    happens to are named in the index report."""
