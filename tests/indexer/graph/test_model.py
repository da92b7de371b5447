"""The code graph's stored form (`indexer.graph.model`): format 2 round-trips and peeks,
and a blob of format 1 (all JSON, what indexes made before) still decodes the same."""

from __future__ import annotations

import json
import zlib

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import FileGraph, Role, Site, decode, encode, graph_of
from ctxd.indexer.graph.model import peek

SOURCE = '''import os.path as osp
from .models import Session


class Client(Session):
    def fetch(self, url: str) -> "Session":
        s = Session()
        return s.get(osp.join(url, "ünïcode"))
'''


def format_1(graph: FileGraph) -> bytes:
    """The graph as format 1 wrote it: one JSON list, the sites' integers last."""
    strings: dict[str, int] = {}

    def s(text: str | None) -> int:
        return 0 if text is None else strings.setdefault(text, len(strings) + 1)

    defs = [[s(d.name), s(d.qualname), s(d.kind), d.line, d.end_line - d.line, d.parent]
            for d in graph.defs]
    imports = [[s(i.module), s(i.name), s(i.alias), i.level, i.line, int(i.reexport)]
               for i in graph.imports]
    flat: list[int] = []
    last = 0
    for site in graph.sites:
        flat += [s(site.name), site.line - last, site.col, int(site.role), s(site.receiver),
                 site.scope + 1, s(site.value)]
        last = site.line
    body = [1, graph.language, list(strings), defs, imports, flat]
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"), 1)


def test_both_formats_decode_to_the_same_graph_with_the_same_peek() -> None:
    g = graph_of("python", parse_source("python", SOURCE))
    assert g is not None and len(g.sites) > 10
    new, old = encode(g), format_1(g)
    assert zlib.decompress(new)[:3] == b"[2,"
    for blob in (new, old):
        got = decode(blob)
        assert got == g
        assert got is not None and all(
            type(s) is Site and type(s.role) is Role for s in got.sites)
        seen = peek(blob)
        assert seen is not None and seen.language == "python"
        assert seen.imports == g.imports and "Session" in seen.strings
    assert peek(new) == peek(old)


def test_an_empty_graph_and_an_unknown_format() -> None:
    empty = FileGraph("go")
    assert decode(encode(empty)) == empty
    unknown = zlib.compress(b'[9,"go",[],[],[]]\n')
    assert decode(unknown) is None and peek(unknown) is None
