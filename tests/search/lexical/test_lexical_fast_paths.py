"""The embedded lexical engine's fast paths (issue 18) give exactly what the slow ones gave.

Each fast path is checked against the plain computation it replaces: line starts (numpy),
columns (ASCII), spans cut at newlines (one-line spans), context lines (one decode per
window), definitions read only on matching lines, pages shown from the ranking pass
instead of a second evaluation, and the score's early exit when no definition can win.
"""

from __future__ import annotations

import random
from itertools import accumulate

import pytest

from bench.bench_lexical import CASES, search_uncached
from ctxd.indexer.models import Symbol
from ctxd.search.lexical import engine as engine_module
from ctxd.search.lexical.engine import KEEP_AT_MOST, EmbeddedLexical
from ctxd.search.lexical.eval import Doc, Plan, Row
from ctxd.search.lexical.query import parse
from ctxd.search.lexical.rank import (
    Span,
    columns,
    dedupe_spans,
    line_starts,
    split_on_newlines,
)
from tests.search.conftest import IndexBuilder


def _slow_line_starts(data: bytes) -> list[int]:
    return [0, *accumulate(len(p) + 1 for p in data.split(b"\n")[:-1])]


def _slow_columns(line: bytes, start: int, end: int) -> tuple[int, int]:
    a = len(line[:start].decode("utf-8", "replace")) + 1
    return a, a + len(line[start:end].decode("utf-8", "replace"))


def _slow_split(
    spans: list[tuple[int, int]], starts: list[int], size: int
) -> dict[int, list[tuple[int, int]]]:
    """Every byte of every span, grouped into per-line runs (the definition)."""
    out: dict[int, list[tuple[int, int]]] = {}
    for s, e in spans:
        for line in range(1, len(starts) + 1):
            lo = starts[line - 1]
            hi = starts[line] - 1 if line < len(starts) else size
            a, b = max(s, lo), min(e, hi)
            if b > a:
                out.setdefault(line, []).append((a, b))
    return out


def _doc(text: str) -> Doc:
    return Doc(Row(1, 1, "r", "f.txt", "text", len(text)), text)


def test_line_starts_match_splitting_the_bytes() -> None:
    rng = random.Random(18)
    samples = [b"", b"\n", b"a", b"a\n", b"\n\nx", b"ab\r\ncd\n"]
    samples += [
        bytes(rng.choice(b"ab\n\xc3\xa9") for _ in range(rng.randint(0, 60))) for _ in range(300)
    ]
    for data in samples:
        assert line_starts(data) == _slow_line_starts(data), data


def test_ascii_columns_equal_decoded_columns() -> None:
    rng = random.Random(18)
    for _ in range(3000):
        line = bytes(rng.choice(b"ab \t(") for _ in range(rng.randint(0, 12)))
        start, end = rng.randint(0, 14), rng.randint(0, 14)
        assert columns(line, start, end) == _slow_columns(line, start, end)
    line = "é = naïve".encode()  # not ASCII: still decoded
    assert columns(line, 5, 11) == _slow_columns(line, 5, 11) == (5, 10)


def test_spans_cut_at_newlines_whether_on_one_line_or_several() -> None:
    rng = random.Random(18)
    for _ in range(500):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(1, 40)))
        starts = line_starts(data)
        spans = []
        for _ in range(rng.randint(0, 4)):
            s = rng.randint(0, len(data))
            spans.append((s, rng.randint(s, len(data))))
        assert split_on_newlines(spans, starts, len(data)) == _slow_split(
            spans, starts, len(data)
        ), (data, spans)


def _slow_dedupe(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: (not s[0], s[1], -(s[2] - s[1]))):
        if not (out and out[-1][0] == s[0] and s[1] < out[-1][2]):
            out.append(s)
    return out


def test_spans_already_in_order_are_deduplicated_like_any_others() -> None:
    rng = random.Random(18)
    for _ in range(20000):
        spans: list[Span] = []
        for _ in range(rng.randint(0, 4)):
            s = rng.randint(0, 8)
            spans.append((rng.random() < 0.15, s, s + rng.randint(0, 3)))
        if rng.random() < 0.7:  # often in order, as one atom's matches come
            spans.sort(key=lambda x: (x[0], x[1]))
        assert dedupe_spans(spans) == _slow_dedupe(spans), spans
    assert dedupe_spans([(False, 3, 3), (False, 3, 5)]) == [(False, 3, 5)]


@pytest.mark.parametrize(
    "text",
    [
        "one\r\ntwo\nthree é\n\nfive",
        "trailing newline\nlast\n",
        "lone \udc80 surrogate\nnext\r\nthird",  # not valid UTF-8: decoded line by line
    ],
)
def test_context_lines_decoded_per_window_equal_line_by_line(text: str) -> None:
    doc = _doc(text)
    for first in range(1, doc.line_count + 1):
        for last in range(first, doc.line_count + 1):
            want = tuple(doc.line_text(n) for n in range(first, last + 1))
            assert doc.lines_text(first, last) == want


def test_definitions_are_read_only_on_the_lines_asked_for(index: IndexBuilder) -> None:
    text = "def alpha():\n    pass\n\ndef beta():\n    pass\n\nclass Gamma:\n    pass\n"
    index.add_repo("app", {"a.py": text, "b.py": "def delta():\n    pass\n"})
    ids = {str(p): int(i) for i, p in index.store.query("SELECT id, path FROM files")}
    plan = Plan(index.store, parse("pass"))
    plan.prefetch_symbols({ids["a.py"]: [4, 7, 8], ids["b.py"]: [2]})
    assert [(s.name, s.line) for s in plan.symbols_of(ids["a.py"])] == [("beta", 4), ("Gamma", 7)]
    assert plan.symbols_of(ids["b.py"]) == []


def _answer(engine: EmbeddedLexical, query: str, **kw: int) -> tuple[object, ...]:
    res = engine.search(query, **kw)
    return (res.files, res.match_count, res.file_count, res.partial, res.notes)


def test_pages_shown_from_the_ranking_pass_equal_pages_evaluated_again(
    index: IndexBuilder,
) -> None:
    files = {
        f"m{i:03}.py": f"def quokka_{i}(x):\n    # quokka {i}\n    return x\n\n" * (1 + i % 3)
        for i in range(KEEP_AT_MOST + 20)
    }
    files["notes.md"] = "quokka lives here\r\nand here: quokka\n"
    index.add_repo("app", files)
    engine = EmbeddedLexical(index.store)
    for keep in (40, 70):  # the best, kept evaluated (files come in batches of 64)
        with engine_module._ANSWERS_LOCK:
            engine_module._ANSWERS.clear()
        outcome, hits = engine._ranked(parse("quokka"), keep=keep)
        assert set(outcome.kept) == {h.row.id for h in hits[:keep]}
    for query in ("quokka", "def quokka_1", "case:yes quokka", "sym:quokka_7"):
        with engine_module._ANSWERS_LOCK:
            engine_module._ANSWERS.clear()
        kept = _answer(engine, query, max_files=40, context_lines=2)  # kept from ranking
        assert all(not entry[1].kept for entry in engine_module._ANSWERS.values())
        again = _answer(engine, query, max_files=40, context_lines=2)  # cached: evaluated
        assert kept == again
        with engine_module._ANSWERS_LOCK:
            engine_module._ANSWERS.clear()
        everything = _answer(engine, query, max_files=KEEP_AT_MOST + 50, context_lines=2)
        assert everything[0][:40] == kept[0]  # type: ignore[index]
        assert everything[1:] == kept[1:]


def test_a_definition_on_a_later_line_still_sets_the_score(index: IndexBuilder) -> None:
    text = "quokka = 1\nprint(quokka)\n\n\ndef quokka():\n    pass\n"
    index.add_repo(
        "app",
        {"a.py": text, "b.py": "quokka = 1\nprint(quokka)\n"},
        symbols={"a.py": [Symbol(name="quokka", kind="function", line=5, end_line=6)], "b.py": []},
    )
    res = EmbeddedLexical(index.store).search("quokka")
    scores = {f.path: f.score for f in res.files}
    assert scores["b.py"] == 500.0  # whole-word matches only
    assert scores["a.py"] > 7000.0  # the definition's bonus, found after the word matches


def test_the_benchmark_asks_50_distinct_queries_that_parse_with_the_cache_off(
    index: IndexBuilder,
) -> None:
    assert len({c.query for c in CASES}) == 50
    for case in CASES:
        parse(case.query)
    index.add_repo("app", {"a.py": "import os\nmax_retries = 3\n"})
    engine = EmbeddedLexical(index.store)
    shape = {"max_files": 30, "context_lines": 3}
    assert [f.path for f in search_uncached(engine, "max_retries", shape).files] == ["a.py"]
    assert [f.path for f in search_uncached(engine, "import", shape).files] == ["a.py"]
    keys = [key[1] for key in engine_module._ANSWERS]
    assert len(keys) == 1 and "import" in keys[0]  # the first answer was dropped
