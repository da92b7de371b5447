"""Verifying and scoring a batch of candidate files at once, in numpy, not per match.

`BatchVerifier.of(plan)` returns a verifier for the queries it can take (every node an
AND, OR, NOT, content/path text or a file fact such as `lang:` or `repo:`; no `sym:`, no
`type:`), else None, and the engine verifies per file as before
(`search.lexical.eval.FileEval`). `BatchVerifier.run(rows, files)` gives, for a batch of
candidate files (`search.lexical.texts.FileText`), what the engine's per-file path gives:
whether each file matches (Zoekt's evaluation: AND/OR/NOT per file, a bare term on path OR
content), its matching lines (Zoekt's line-mode count), its score
(`search.lexical.file_score.score_file`) and, on demand, its shaped matches (`shaped`) for
showing. None when the batch needs the per-file path (below).

How: the batch's texts are laid end to end, one newline between two files (`laid.Laid`),
and each content pattern runs once over all of them: a literal by `laid.find_literal`
(numpy over the whole buffer: no Python per match, no copy), either case of its ASCII
letters when case-insensitive (as `bytes.lower` folds); a regex through RE2's own matcher
(one call per match, without the wrapper's Python iterator; `_regex`). Offsets become
files and lines with
`np.searchsorted` over the files' starts and the lines' ends (kept with the batch); match
counts, word scores (`rank.word_score`: the character classes at both ends), the
definition bonus (only for the matches that overlap a definition's name on their line:
`rank.content_fragment_score` in Python, for those alone) and line counts are array
operations over the batch.

The same answers as the per-file path (`tests/search/lexical/test_lexical_batch.py`
compares both over random texts and queries); where they could differ, the batch goes per
file:
- a case-insensitive literal with `k` or `s` over a text holding KELVIN SIGN or LONG S
  (RE2 folds those to ASCII letters, `bytes.lower` does not);
- a regex match that runs past the end of its file (into the newline between two
  files) or over a line's end, and any pattern with `\\A`, `\\z` or an inline flag
  group `(?`;
- matches of several patterns overlapping in one file (the first one wins: in Python);
- a file without text (read as missing).
The words' nearness (`file_score.words_near`) is computed here when every pattern is a literal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import re2

from ctxd.search.lexical.eval import Doc, FileEval, Plan, Row, utf8, walk_nodes
from ctxd.search.lexical.laid import Laid, find_literal, unique_ints
from ctxd.search.lexical.query import (
    And,
    Branch,
    Const,
    Field,
    Lang,
    Meta,
    Node,
    Not,
    Or,
    Repo,
    RepoFlag,
    RepoSet,
    Text,
)
from ctxd.search.lexical.rank import (
    _CLASS,
    NEAR_LINES,
    SCORE_PARTIAL_WORD,
    SCORE_WORD,
    Section,
    Span,
    content_fragment_score,
    dedupe_spans,
    path_fragment_score,
)
from ctxd.search.lexical.regex_trigrams import fold_ascii, literal_text
from ctxd.search.lexical.texts import FileText

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

_FACTS = (Lang, Repo, RepoSet, Const, RepoFlag, Branch, Meta)
"""File facts: evaluated per file from its row alone."""
_CLASSES = np.frombuffer(_CLASS, dtype=np.uint8)
_ANCHOR = getattr(re2, "_Anchor", None)
_UNANCHORED = getattr(_ANCHOR, "UNANCHORED", None)
"""google-re2's own matcher (`_regexp.Match`), called without its Python iterator; other
versions of the binding go through `finditer`."""
_NO_MATCH = (-1, -1)


@dataclass(frozen=True, slots=True)
class _Atom:
    """One text pattern of the query, as the batch runs it."""

    node: Text
    needle: bytes | None
    """The literal's bytes (lowered when case-insensitive), or None: a regex."""
    fold: bool
    """Case-insensitive literal: matched as if over the lowered text (`bytes.lower`)."""
    rx: Any


class BatchVerifier:
    """The batch verifier of one query (`of`)."""

    def __init__(self, plan: Plan, atoms: dict[int, _Atom], sections: SectionLoader,
                 near: int) -> None:
        self.plan = plan
        self.atoms = atoms
        self.load_sections = sections
        self.near = near

    @classmethod
    def of(cls, plan: Plan, sections: SectionLoader, near: int = 0) -> BatchVerifier | None:
        """The verifier of `plan`'s query, or None when it has nodes the batch does not take
        (`sym:`, `type:`, inline flags, `\\A`/`\\z`) or needs no text. `sections` fills
        the definitions (`FileText.sections`) of the files whose matches get scored; `near`:
        the words the query ANDs (`file_score.and_words`), whose nearness `BatchResult.near`
        tells."""
        if not plan.needs_content:
            return None
        atoms: dict[int, _Atom] = {}
        seen: set[int] = set()
        for node in walk_nodes(plan.root):
            if id(node) in seen:
                return None  # one node twice: the per-file path remembers it by identity
            seen.add(id(node))
            if isinstance(node, Text):
                if any(t in node.pattern for t in ("\\A", "\\z", "(?")):
                    return None
                atoms[id(node)] = _atom(plan, node)
            elif not isinstance(node, (And, Or, Not, *_FACTS)):
                return None
        return cls(plan, atoms, sections, near)

    def run(self, rows: Sequence[Row], files: Sequence[FileText]) -> BatchResult | None:
        """The batch's matches and scores, or None: verify these files one by one."""
        return _Run(self, rows, files).result()


SectionLoader = Callable[[dict[int, FileText]], None]


@dataclass(slots=True)
class BatchResult:
    """Per file of a batch (in its order): whether it matched, its matching lines, its best
    match's score (`file_score.score_file`'s `best`), its matched atoms and whether it has
    content matches (else a path match, or none: the whole path)."""

    matched: list[bool]
    lines: list[int]
    best: list[float]
    atoms: list[int]
    content: list[bool]
    run: _Run
    near: list[bool] | None
    """Per file, `file_score.words_near` of its matches (for a query of `near` >= 2 words whose
    patterns are all literals; else None: ask `run.pieces` and `file_score.words_near`)."""

    def file(self, i: int) -> ShapedFile:
        """File `i`'s matches, apart from the batch (`ShapedFile.shaped` shapes them)."""
        return self.run.file(i)


def _atom(plan: Plan, node: Text) -> _Atom:
    cs = node.case_sensitive
    rx = plan.regex(node.pattern, cs)
    lit = literal_text(node.pattern)
    if lit and (cs or lit.isascii()):
        needle = utf8(lit if cs else fold_ascii(lit))
        if b"\n" not in needle:
            return _Atom(node, needle, not cs, rx)
    return _Atom(node, None, False, rx)


_EMPTY = np.zeros(0, np.int64)


def _regex(buf: bytes, rx: Any) -> tuple[Ints, Ints]:
    """RE2's matches over `buf`, as its `finditer` gives them (empty ones included)."""
    found: list[int] = []
    regexp = getattr(rx, "_regexp", None)
    if _UNANCHORED is None or regexp is None:
        for m in rx.finditer(buf):
            found += m.span()
        return _pairs(found)
    match, pos, end = regexp.Match, 0, len(buf)
    while True:
        span = match(_UNANCHORED, buf, pos, end)[0]
        if span == _NO_MATCH:
            break
        found += span
        if pos == end:
            break
        pos = pos + 1 if pos == span[1] else span[1]
    return _pairs(found)


def _pairs(found: list[int]) -> tuple[Ints, Ints]:
    """Flat (start, end, start, end, ...) as two arrays."""
    if not found:
        return _EMPTY, _EMPTY
    arr = np.array(found, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0].copy(), arr[:, 1].copy()


class _Run:
    """One batch through the verifier: the files' texts laid end to end in `buf`."""

    def __init__(self, verifier: BatchVerifier, rows: Sequence[Row],
                 files: Sequence[FileText]) -> None:
        self.v = verifier
        self.rows = rows
        self.files = files
        n = self.n = len(rows)
        self.laid = Laid.of(files)
        self.first = self.laid.first  # each file's first byte in `buf`
        self.last = self.laid.last  # its end (the newline after it)
        self.buf = self.laid.buf
        self.holds: dict[int, Bools] = {}
        self.content: dict[int, tuple[Ints, Ints, Ints]] = {}  # (file, start, end)
        self.path: dict[int, list[list[tuple[int, int]]]] = {}
        self.atom_count: dict[int, Ints] = {}
        self.spans: tuple[Ints, Ints, Ints] = (_EMPTY, _EMPTY, _EMPTY)
        """Content matches kept, non-empty, by file and offset: (file, start, end)."""
        self.line_of: Ints = _EMPTY
        self.has_content: Bools = np.zeros(n, np.bool_)
        self.path_spans: dict[int, list[tuple[int, int]]] = {}
        self.words: dict[bytes, int] = {}
        self.span_words: Ints = _EMPTY
        """Each kept content match's word (`_word`), -1 for a regex's."""

    def result(self) -> BatchResult | None:
        for a in self.v.atoms.values():
            if not self._match(a):
                return None
        root = self.v.plan.root
        matched = self._holds(root)
        atoms = np.zeros(self.n, np.int64)
        pieces: list[tuple[Ints, Ints, Ints, Ints]] = []
        path_atoms: list[tuple[int, Bools]] = []
        self._collect(root, matched, atoms, pieces, path_atoms)
        if not self._shape(pieces, path_atoms, matched):
            return None
        lines = self._lines(matched)
        if lines is None:
            return None
        best = self._best()
        for i in np.flatnonzero(matched & ~self.has_content).tolist():
            p = utf8(self.rows[i].path)
            best[i] = max((path_fragment_score(p, s, e)
                           for s, e in self.path_spans.get(i, []) if e > s), default=0.0)
        return BatchResult(matched.tolist(), lines, best.tolist(), atoms.tolist(),
                           self.has_content.tolist(), self, self._near())

    # -- evaluation: `FileEval.eval` and `collect` over the batch ---------------------

    def _match(self, a: _Atom) -> bool:
        """Run one pattern: its content matches (file, start, end) and path matches."""
        node, key = a.node, id(a.node)
        has = np.zeros(self.n, np.bool_)
        if node.field != Field.PATH:
            if a.needle is not None:
                if a.fold and (b"k" in a.needle or b"s" in a.needle) and any(
                    f.fold_hazard for f in self.files
                ):
                    return False
                starts, ends = find_literal(self.buf, a.needle, a.fold)
            else:
                starts, ends = _regex(self.buf, a.rx)
            file = np.searchsorted(self.first, starts, "right") - 1
            if len(ends) and bool(np.any(ends > self.last[file])):
                return False  # past its file's end: the per-file path decides
            self.content[key] = (file, starts, ends)
            has = np.bincount(file, minlength=self.n) > 0
        found = has.astype(np.int64)
        if node.field != Field.CONTENT:
            find = self.v.plan.finder(node.pattern, node.case_sensitive)
            paths = [find(utf8(r.path)) for r in self.rows]
            self.path[key] = paths
            in_path = np.fromiter((bool(p) for p in paths), np.bool_, self.n)
            has = has | in_path
            found += in_path
        self.holds[key] = has
        self.atom_count[key] = found
        return True

    def _holds(self, node: Node) -> Bools:
        key = id(node)
        if key in self.holds:
            return self.holds[key]
        if isinstance(node, Not):
            out = ~self._holds(node.child)
        elif isinstance(node, And):
            out = np.ones(self.n, np.bool_)
            for c in node.children:
                out = out & self._holds(c)
        elif isinstance(node, Or):
            out = np.zeros(self.n, np.bool_)
            for c in node.children:
                out = out | self._holds(c)
        else:  # a file fact: from the row alone
            plan = self.v.plan
            out = np.fromiter(
                (FileEval(plan, Doc(r)).eval(node) for r in self.rows), np.bool_, self.n
            )
        self.holds[key] = out
        return out

    def _collect(self, node: Node, mask: Bools, atoms: Ints,
                 pieces: list[tuple[Ints, Ints, Ints, Ints]], path_atoms: list[tuple[int, Bools]]
                 ) -> None:
        """`FileEval.collect` for the files where `mask` holds: atoms counted into `atoms`,
        content matches into `pieces`, the path matches' (pattern, files) into
        `path_atoms`."""
        if isinstance(node, And | Or):
            for c in node.children:
                self._collect(c, mask & self._holds(c), atoms, pieces, path_atoms)
        elif isinstance(node, Text):
            key = id(node)
            atoms += np.where(mask, self.atom_count[key], 0)
            if key in self.content:
                file, starts, ends = self.content[key]
                keep = mask[file]
                word = self._word(self.v.atoms[key])
                pieces.append((file[keep], starts[keep], ends[keep],
                               np.full(int(keep.sum()), word, np.int64)))
            if key in self.path:
                path_atoms.append((key, mask))
        elif not isinstance(node, Not | Repo | RepoSet):
            atoms += mask

    # -- shaping and scoring: `file_score.shape` and `file_score.score_file` -------------------

    def _shape(self, pieces: list[tuple[Ints, Ints, Ints, Ints]],
               path_atoms: list[tuple[int, Bools]], matched: Bools) -> bool:
        """Content matches deduplicated (overlapping ones: the per-file path), or path
        matches where a file has no content match (deduplicated as `rank.dedupe_spans`)."""
        if not pieces:
            file = starts = ends = words = _EMPTY
        elif len(pieces) == 1:
            file, starts, ends, words = pieces[0]
        else:
            file, starts, ends, words = (np.concatenate([p[k] for p in pieces])
                                         for k in range(4))
            order = np.lexsort((starts - ends, starts))  # files are laid out in order
            file, starts, ends, words = file[order], starts[order], ends[order], words[order]
            if len(starts) > 1 and bool(np.any(starts[1:] < ends[:-1])):
                return False  # overlapping matches of several patterns
        self.has_content = np.bincount(file, minlength=self.n) > 0
        keep = ends > starts
        self.spans = (file[keep], starts[keep], ends[keep])
        self.span_words = words[keep]
        found: dict[int, list[Span]] = {}
        for key, mask in path_atoms:
            for i in np.flatnonzero(mask & matched & ~self.has_content).tolist():
                found.setdefault(i, []).extend((True, s, e) for s, e in self.path[key][i])
        self.path_spans = {i: [(s, e) for _, s, e in dedupe_spans(spans)]
                           for i, spans in found.items()}
        return True

    def _lines(self, matched: Bools) -> list[int] | None:
        """Each file's matching lines (Zoekt's line-mode count: a path-only match counts
        one); None when a match runs over its line's end (the per-file path cuts it)."""
        file, starts, ends = self.spans
        n = self.n
        line_ends, line0 = self.laid.lines
        at = np.searchsorted(line_ends, starts, "left")  # the end of each match's line
        if len(at) and bool(np.any(ends > line_ends[at])):
            return None
        line = self.line_of = at - line0[file] + 1
        new = np.ones(len(line), np.bool_)
        new[1:] = (line[1:] != line[:-1]) | (file[1:] != file[:-1])
        out = np.bincount(file[new], minlength=n)
        out[matched & ~self.has_content] = 1
        out[~matched] = 0
        return out.tolist()  # type: ignore[no-any-return]

    def _word(self, a: _Atom) -> int:
        """The matched text of a literal's every match, case folded, as a number: what
        `file_score.words_near` compares (-1 for a regex: its matches differ)."""
        if a.needle is None:
            return -1
        return self.words.setdefault(a.needle.lower(), len(self.words))

    def _near(self) -> list[bool] | None:
        """`file_score.words_near` per file: some `NEAR_LINES` consecutive lines, from a matching
        one, hold `near` distinct matched words (None: a regex's matches take part)."""
        need = self.v.near
        if need < 2:
            return None
        words = self.span_words
        if bool(np.any(words < 0)):
            return None
        file = self.spans[0]
        keys = (file << 32) | self.line_of  # (file, line), in order
        first = unique_ints(keys)  # every matching line starts a window
        count = np.zeros(len(first), np.int64)
        for w in unique_ints(words).tolist():
            kw = keys[words == w]
            count += (np.searchsorted(kw, first + NEAR_LINES, "left")
                      > np.searchsorted(kw, first, "left"))
        near = np.bincount((first[count >= need] >> 32), minlength=self.n) > 0
        return near.tolist()  # type: ignore[no-any-return]

    def _best(self) -> npt.NDArray[np.float64]:
        """Each file's best content match: `rank.word_score` (a character-class change at
        both ends; the file's edges count), raised where a match overlaps a definition."""
        file, starts, ends = self.spans
        best = np.zeros(self.n, np.float64)
        if not len(starts):
            return best
        b = np.frombuffer(self.buf, np.uint8)
        cls = _CLASSES
        at_start = (starts == self.first[file]) | (cls[b[starts - 1]] != cls[b[starts]])
        after = np.minimum(ends, len(b) - 1)
        at_end = (ends == self.last[file]) | (cls[b[ends - 1]] != cls[b[after]])
        word = np.where(at_start & at_end, SCORE_WORD,
                        np.where(at_start | at_end, SCORE_PARTIAL_WORD, 0.0))
        head = np.flatnonzero(np.diff(file, prepend=-1))  # each file's first match
        best[file[head]] = np.maximum.reduceat(word, head)
        self._definitions(best)
        return best

    def _definitions(self, best: npt.NDArray[np.float64]) -> None:
        """Raise `best` where a match overlaps a definition's name on its line: those
        matches alone get `rank.content_fragment_score` (every definition of the line)."""
        file, starts, ends = self.spans
        scored = np.flatnonzero(np.bincount(file, minlength=self.n) > 0).tolist()
        self.v.load_sections({self.rows[i].id: self.files[i] for i in scored})
        bounds = [self.files[i].section_bounds for i in scored]
        counts = np.fromiter((len(b[0]) for b in bounds), np.int64, len(bounds))
        if not counts.sum():
            return
        base = np.repeat(self.first[scored], counts)
        gs = np.concatenate([b[0] for b in bounds]) + base
        ge = np.concatenate([b[1] for b in bounds]) + base
        first = np.searchsorted(ends, gs, "right")  # the first match ending after it starts
        stop = np.searchsorted(starts, ge, "left")  # past the last one starting before it ends
        some = stop > first  # a match overlaps it: those from `first` to before `stop`
        if not some.any():
            return
        # each match overlapping some definition, once: where more ranges have begun than
        # ended (a range's first and stop counted in the bins of the matches they fall on)
        m = len(starts)
        depth = np.cumsum(np.bincount(first[some], minlength=m + 1)[:m]
                          - np.bincount(stop[some], minlength=m + 1)[:m])
        js = np.flatnonzero(depth > 0)
        fs = file[js]
        at = self.first[fs]
        raised: dict[int, float] = {}
        for i, line, s, e in zip(fs.tolist(), self.line_of[js].tolist(),
                                 (starts[js] - at).tolist(), (ends[js] - at).tolist(),
                                 strict=True):
            f = self.files[i]
            secs = [Section(*p) for p in (f.sections or {}).get(line, ())]
            score = content_fragment_score(f.data, s, e, secs, self.rows[i].language)
            if score > raised.get(i, 0.0):
                raised[i] = score
        for i, score in raised.items():
            best[i] = max(best[i], score)

    # -- shaped matches, for showing ---------------------------------------------------

    def pieces(self, i: int) -> dict[int, list[tuple[int, int]]]:
        """File `i`'s content pieces by line (file offsets), as `rank.split_on_newlines`."""
        return self.file(i).pieces()

    def file(self, i: int) -> ShapedFile:
        """File `i`'s matches, apart from the batch (which it does not keep alive)."""
        f, row = self.files[i], self.rows[i]
        if not self.has_content[i]:
            path = self.path_spans.get(i)
            return ShapedFile(row, f, None, None if path is None
                              else [(s, e) for s, e in path if e > s])
        file, starts, ends = self.spans
        lo, hi = np.searchsorted(file, [i, i + 1]).tolist()
        base = int(self.first[i])
        spans = (self.line_of[lo:hi].copy(), starts[lo:hi] - base, ends[lo:hi] - base)
        return ShapedFile(row, f, spans, None)


@dataclass(frozen=True, slots=True)
class ShapedFile:
    """One file's matches as the batch found them: content matches (line, start, end, in
    file offsets) or, without them, its path matches (None: the whole path)."""

    row: Row
    text: FileText
    spans: tuple[Ints, Ints, Ints] | None
    path: list[tuple[int, int]] | None

    def pieces(self) -> dict[int, list[tuple[int, int]]]:
        """The content matches by line, as `rank.split_on_newlines` gives them."""
        if self.spans is None or not len(self.spans[0]):
            return {}
        line_of, starts, ends = self.spans
        # the matches are in order, so a line's are consecutive: cut where the line changes
        cuts = (np.flatnonzero(line_of[1:] != line_of[:-1]) + 1).tolist()
        pairs = list(zip(starts.tolist(), ends.tolist(), strict=True))
        lines = line_of.tolist()
        return {lines[a]: pairs[a:b]
                for a, b in zip([0, *cuts], [*cuts, len(pairs)], strict=True)}

    def shaped(self) -> tuple[Doc, dict[int, list[tuple[int, int]]] | None,
                              list[tuple[int, int]] | None]:
        """Its Doc and its matches as `file_score.shape` gives them: content pieces by line
        (None: no content match), else its path matches (None: the whole path)."""
        f, row = self.text, self.row
        doc = Doc(row, f.text, _data=f.data, _starts=f.line_starts, path_bytes=utf8(row.path),
                  _clean=f.clean)
        if self.spans is not None:
            return doc, self.pieces(), None
        return doc, None, self.path

