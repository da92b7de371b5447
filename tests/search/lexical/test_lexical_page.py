"""A shown file's lines: context blocks cut from the whole text at once (a file with many
windows, `page.context_blocks`) are those decoded window by window (`Doc.lines_text`), and the
windows merge as before (`rank.merge_windows`)."""

from __future__ import annotations

import random

import pytest

from ctxd.search.lexical import file_score, page
from ctxd.search.lexical.eval import Doc, Row
from ctxd.search.lexical.rank import merge_windows
from ctxd.search.models import Block

ROW = Row(1, 1, "repo", "a.py", "python", 0)


def doc_of(text: str) -> Doc:
    return Doc(ROW, text)


def windows_reference(lines: list[int], context: int, last: int) -> list[tuple[int, int]]:
    """`merge_windows` as it was written first (min/max per line)."""
    out: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        lo, hi = max(1, line - context), min(last, line + context)
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


TEXTS = [
    "",
    "one line, no newline",
    "a\nb\nc\n",
    "a\r\nb\r\n\r\nc",  # CRLF, no final newline
    "x\r\ny\nz\r",  # mixed line ends, a lone CR at the end
    "caf\u00e9\n\u65e5\u672c\u8a9e\n\U0001f600 emoji\n",
    "long " * 50_000 + "\nshort\n" + "y" * 200_000,  # huge lines
    "bad \udcff surrogate\nnext\n",  # a lone surrogate: decoded per line
    "\n\n\n\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_blocks_cut_from_the_whole_text_are_the_decoded_windows(text, monkeypatch):
    rng = random.Random(len(text))
    doc = doc_of(text)
    last = doc.line_count
    if last == 0:
        return
    for _ in range(30):
        lines = sorted(rng.sample(range(1, last + 1), rng.randint(1, last)))
        windows = merge_windows(lines, rng.randint(0, 3), last)
        want = tuple(Block(lo, doc.lines_text(lo, hi)) for lo, hi in windows)
        monkeypatch.setattr(page, "LINES_PER_WINDOW", 10**9)  # the whole text split
        assert page.context_blocks(doc, windows) == want
        monkeypatch.setattr(page, "LINES_PER_WINDOW", 0)  # a decode per window
        assert page.context_blocks(doc, windows) == want


def test_many_windows_of_a_long_crlf_file():
    text = "".join(f"line {n} text\r\n" for n in range(1, 2001))
    doc = doc_of(text)
    windows = merge_windows(range(1, 2001, 7), 2, doc.line_count)
    assert len(windows) * page.LINES_PER_WINDOW >= doc.line_count  # split whole
    got = page.context_blocks(doc, windows)
    assert got == tuple(Block(lo, doc.lines_text(lo, hi)) for lo, hi in windows)
    assert got[1].lines[0] == "line 6 text"


def test_windows_merge_as_before():
    rng = random.Random(3)
    for _ in range(3000):
        last = rng.randint(1, 60)
        lines = [rng.randint(1, last + 3) for _ in range(rng.randint(0, 12))]
        context = rng.randint(0, 4)
        assert merge_windows(lines, context, last) == windows_reference(lines, context, last)


@pytest.mark.parametrize("text", TEXTS)
def test_definitions_are_placed_where_the_per_file_path_places_them(text):
    """`texts.placed_sections` (the batch's, from the line ends as arrays) against
    `file_score.sections` (the per-file path's), lines out of range and empty names too."""
    from ctxd.search.lexical.eval import SymbolRow
    from ctxd.search.lexical.texts import file_text, placed_sections

    f = file_text(text)
    doc = Doc(ROW, text, _data=f.data, _clean=f.clean)
    words = [w for w in text.replace("\n", " ").split(" ") if w][:40] or ["x"]
    rng = random.Random(7)
    symbols = [(rng.choice([*words, "", "absent", w[:1]]), rng.choice(["function", "class"]),
                rng.randint(-1, len(f.ends) + 2)) for w in words for _ in range(3)]
    placed = placed_sections(f, symbols)
    rows = [SymbolRow(n, k, ln) for n, k, ln in symbols]
    expected = file_score.sections(doc, rows, range(-5, len(f.ends) + 5))
    assert placed == {line: tuple(secs) for line, secs in expected.items()}


def test_placed_definitions_are_left_untracked_by_the_collector():
    """A long-lived process keeps every read text's placed definitions: plain tuples of
    numbers and strings, which Python's collector stops tracking once it has seen them
    (so a full collection does not walk them); one dict a file holds them."""
    import gc

    from ctxd.search.lexical.texts import file_text, placed_sections

    f = file_text("def alpha():\n    return beta\nclass Gamma:\n    pass\n")
    placed = placed_sections(f, [("alpha", "function", 1), ("Gamma", "class", 3),
                                 ("beta", "variable", 2)])
    assert set(placed) == {1, 2, 3}
    gc.collect()  # a definition's tuple first, then (next time) the line's tuple of them
    gc.collect()
    assert not any(gc.is_tracked(secs) or any(gc.is_tracked(s) for s in secs)
                   for secs in placed.values())
