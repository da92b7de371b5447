"""`search.lexical.laid`: a literal's occurrences found by numpy are `bytes.split`'s
(leftmost, non-overlapping), and a batch's line ends are its files' own."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ctxd.search.lexical import laid as laid_module
from ctxd.search.lexical.laid import Laid, find_literal, unique_ints
from ctxd.search.lexical.texts import file_text


@pytest.fixture(autouse=True)
def numpy_for_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy search for the short buffers of these tests too (the engine sends short
    ones to `bytes.split`)."""
    monkeypatch.setattr(laid_module, "SMALL", 0)


def split_offsets(buf: bytes, needle: bytes) -> list[int]:
    """The starts of `needle`'s occurrences as `bytes.find` finds them, one after another."""
    out, at = [], buf.find(needle)
    while at >= 0:
        out.append(at)
        at = buf.find(needle, at + len(needle))
    return out


@pytest.mark.parametrize("buf,needle", [
    (b"", b"ab"), (b"a", b"ab"), (b"ab", b"ab"), (b"xab", b"ab"), (b"abx", b"ab"),
    (b"aaaa", b"aa"), (b"aaaaa", b"aaa"), (b"abababa", b"aba"), (b"abcabcab", b"abcab"),
    (b"x\nself\nself", b"self"), (b"caf\xc3\xa9 caf\xc3\xa9", b"\xc3\xa9"), (b"zzz", b"z"),
    (b"the theme the", b"the"), (b"\r\nthe\r\n", b"\r\n"),
])
def test_offsets_are_bytes_finds(buf, needle):
    starts, ends = find_literal(buf, needle)
    assert starts.tolist() == split_offsets(buf, needle)
    assert (ends - starts).tolist() == [len(needle)] * len(starts)


def test_random_texts_and_needles():
    rng = random.Random(30)
    alphabet = b"abAB_ \n\r\xc3\xa9T@`"
    for _ in range(2000):
        buf = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 200)))
        if rng.random() < 0.5 and len(buf) > 2:  # a needle cut from the text
            at = rng.randrange(len(buf) - 1)
            needle = buf[at:at + rng.randrange(2, 8)]
        else:
            needle = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 6)))
        if not needle:
            continue
        assert find_literal(buf, needle)[0].tolist() == split_offsets(buf, needle), (buf, needle)
        low = needle.lower()
        assert find_literal(buf, low, fold=True)[0].tolist() == split_offsets(
            buf.lower(), low), (buf, needle)


@pytest.mark.parametrize("buf,needle", [
    (b"Self SELF self sElF", b"self"), (b"A_b a_B @`[{", b"a_b"), (b"@@ `` @`", b"`@"),
    (b"[{ {[", b"{["), (b"TheTHEthe", b"the"), (b"CAF\xc3\x89 caf\xc3\xa9", b"caf\xc3\xa9"),
])
def test_folded_offsets_are_those_in_the_lowered_text(buf, needle):
    """Only an ASCII letter matches its capital: `@` is not a capital of `` ` ``, nor `[`
    of `{` (they differ by the same bit), nor a non-ASCII byte of another."""
    starts, _ = find_literal(buf, needle, fold=True)
    assert starts.tolist() == split_offsets(buf.lower(), needle)


def test_a_batchs_lines_end_where_its_files_lines_end():
    texts = ["a\nb\n", "", "no final newline", "\r\n\r\n", "x" * 100_000 + "\ny"]
    files = [file_text(t) for t in texts]
    laid = Laid.of(files)
    assert laid.buf == b"\n".join(f.data for f in files)
    ends, line0 = laid.lines
    for i, f in enumerate(files):
        first = int(laid.first[i])
        assert laid.buf[first:int(laid.last[i])] == f.data
        mine = ends[line0[i]:line0[i] + len(f.ends)] - first
        assert mine.tolist() == f.ends.tolist()
    assert np.all(np.diff(ends) > 0)


@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000])
def test_unique_ints_is_numpys_unique(size: int) -> None:
    values = np.random.default_rng(size).integers(-3, 40, size).astype(np.int64)
    got = unique_ints(values)
    assert got.dtype == values.dtype
    assert got.tolist() == np.unique(values).tolist()
