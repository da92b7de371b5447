"""Stored graphs read in part (`indexer.graph.reading`): the lazy decode and the head-only
peek give what `model.decode` / `model.peek` give, for format 2 and format-1 blobs, and
a `Sites` read in part (by name, by role, a few at a time) equals the full list filtered."""

from __future__ import annotations

import random
import zlib

import pytest

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import FileGraph, Role, Site, decode, encode, graph_of, model, reading
from ctxd.indexer.graph.reading import Sites, decode_lazy, peek
from tests.indexer.graph.test_model import SOURCE, format_1


def test_lazy_decode_and_head_peek_equal_the_full_ones(monkeypatch) -> None:
    g = graph_of("python", parse_source("python", SOURCE))
    assert g is not None and len(g.sites) > 10
    for blob in (encode(g), format_1(g)):
        lazy = decode_lazy(blob)
        assert lazy == decode(blob) == g and lazy is not None
        assert all(type(s) is Site and type(s.role) is Role for s in lazy.sites)
        assert peek(blob) == model.peek(blob)
    assert isinstance(decode_lazy(encode(g)).sites, Sites)  # type: ignore[union-attr]
    monkeypatch.setattr(reading, "_HEAD_STEP", 7)  # the head's end found a few bytes at a time
    assert peek(encode(g)) == model.peek(encode(g)) and peek(format_1(g)) == model.peek(
        format_1(g))
    empty = FileGraph("go")
    assert decode_lazy(encode(empty)) == empty and peek(encode(empty)) == model.peek(
        encode(empty))
    unknown = zlib.compress(b'[9,"go",[],[],[]]\n')
    assert decode_lazy(unknown) is None and peek(unknown) is None


def _random_graph(seed: int, names: int, sites: int) -> FileGraph:
    """Sites over `names` strings (numbered past 256 and 65,536, so that a name's
    integer may also appear across two of the column's integers)."""
    rng = random.Random(seed)
    table = [f"n{k}" for k in range(names)]
    out, line = [], 1
    for _ in range(sites):
        line += rng.choice((0, 0, 1, 2))
        out.append(Site(rng.choice(table[:5] + table[-300:] + table[250:260]), line,
                        rng.randrange(1, 90), rng.choice(list(Role)),
                        rng.choice((None, "self", rng.choice(table))), rng.randrange(-1, 3),
                        rng.choice((None, "()X", ":Y"))))
    return FileGraph("python", [], [], out)


@pytest.mark.parametrize("names", [40, 700, 70_000])
def test_sites_read_in_part_equal_the_full_list_filtered(names: int) -> None:
    g = _random_graph(names, names, 3000)
    lazy = decode_lazy(encode(g))
    assert lazy is not None and isinstance(lazy.sites, Sites)
    sites, full = lazy.sites, g.sites
    assert len(sites) == len(full)
    for name in {s.name for s in full} | {"absent", "self", "()X"}:
        assert sites.named(name) == [k for k, s in enumerate(full) if s.name == name]
    for roles in ({Role.REF}, {Role.BIND, Role.PARAM, Role.IMPORT}, set(Role)):
        assert sites.having(roles) == [k for k, s in enumerate(full) if s.role in roles]
        grouped: dict[str, list[int]] = {}
        for k, s in enumerate(full):
            if s.role in roles:
                grouped.setdefault(s.name, []).append(k)
        assert sites.grouped(roles) == grouped
    picked = sites.pick([5, 1, 2999, 5])
    assert picked == [full[5], full[1], full[2999], full[5]]
    assert picked[0] is sites[5] is picked[3] and sites[-1] == full[-1]
    assert sites[10:20] == full[10:20]
    with pytest.raises(IndexError):
        sites[len(full)]
    assert sites == full and list(sites) == full and sites.all()[5] is picked[0]
    assert sites.pick([7]) == [full[7]] and sites.pick([]) == []
