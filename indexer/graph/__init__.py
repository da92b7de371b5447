"""The code graph of each file, extracted beside the chunker from the same parse.

`graph_of(language, parsed)` (the chunker's `FileChunks.parsed`) is the file's
`FileGraph`: definitions, imports, and every identifier occurrence that is code, with
its role, receiver and enclosing definition (`indexer.graph.extract`; per-grammar node
tables in `indexer.graph.specs`, import statements in `indexer.graph.imports`). The
pipeline stores it encoded (`indexer.graph.model.encode`) with the file's other rows;
`search.graph` resolves it at query time. `link_keys(graph, path)` (`indexer.graph.links`)
are the keys the file is found by as an importer.
"""

from __future__ import annotations

import logging

from ctxd.indexer.chunk.syntax import ParsedSource
from ctxd.indexer.graph.extract import extract
from ctxd.indexer.graph.links import link_keys
from ctxd.indexer.graph.model import (
    Def,
    FileGraph,
    Import,
    Role,
    Site,
    decode,
    encode,
    module_tail,
)

__all__ = ["Def", "FileGraph", "Import", "Role", "Site", "decode", "encode", "graph_of",
           "link_keys", "module_tail"]

log = logging.getLogger(__name__)


def graph_of(language: str, parsed: object | None) -> FileGraph | None:
    """The code graph of a file the chunker parsed (None: not parsed, or a language
    without graph rules). A failure is logged and gives None: the file is indexed without
    its graph rather than not at all."""
    if not isinstance(parsed, ParsedSource):
        return None
    try:
        return extract(language, parsed)
    except Exception:  # any fault of the extractor: the file keeps its text
        log.exception("code graph of a %s file failed", language)
        return None
