"""The embedded lexical engine: Zoekt's query language over the index's trigram table.

`EmbeddedLexical(store).search(query)` answers a Zoekt query (see `search/lexical/query.py`)
from the index alone (SQLite's FTS5 trigram table, or PostgreSQL's `pg_trgm` index: the
store's `dialect`), with Zoekt's semantics, so that results agree with a
real Zoekt server on the same files (tests/search/test_zoekt_agreement.py checks
this against recorded Zoekt answers). It implements `search.models.LexicalBackend`
and is used by the service layer when no Zoekt server is configured;
`search_files` backs file-name search and `explain` backs `ctxd search --explain`.

How a query runs:

1. Plan: every atom becomes a SQL condition on `files` (built by pure functions,
   user text always bound or quoted): content regexes become an FTS5 trigram
   `MATCH` over the literals every match must contain (`search/lexical/regex_trigrams.py`),
   path regexes `instr()` tests on `files.path`, `repo:` / `lang:` / `sym:` exact
   id or name sets. Conditions that cannot narrow (`foo.*` has no 3-character
   literal, a negated regex) become TRUE; a condition marked exact may be negated.
2. Candidates: one `SELECT` over `files` with that condition. When the query needs
   file content but nothing narrows it (no usable trigram), the engine scans
   instead, reading at most `scan_limit_bytes` of text: `partial=True` and a note.
3. Verify: the query tree is evaluated on each candidate as Zoekt does (a bare term
   matches path OR content; AND/OR/NOT per file; every atom that holds contributes
   its matches, negated ones none), with RE2 over the whole text (`^`/`$` at line
   boundaries), giving exact byte spans. Candidates come `CONTENT_BATCH` at a time; where
   the query allows, a batch is verified and scored at once, in numpy rather than per
   match (`search/lexical/batch.py`: the same answers), else file by file
   (`search/lexical/eval.py`). Texts are kept in the process between queries while the
   index's text stays the same (`search/lexical/texts.py`).
4. Rank: Zoekt's default scoring, simplified: the best line's score (whole word +500,
   word edge +50; a match on a symbol definition +7000 exact, +5500 at an edge,
   +4000 inside, plus a kind bonus; file base-name matches alike) plus up to +400
   when several atoms matched, +`SCORE_NEAR` when the words of a query of several atoms
   all sit within `NEAR_LINES` lines of each other (a definition over a file that
   mentions them far apart); build output (`BUILT_ROLES`) scores half, so the source of
   a phrase ranks above its bundles. Ties: repository, then source before tests before
   prose, then path.
5. Shape: the top files (kept, text and matches, from steps 3-4 when the page ends within
   the first `KEEP_AT_MOST` files; re-read and verified again otherwise) are turned into
   `FileMatch` records: one `LineMatch` per matching line (sorted by line; 1-based
   character columns, end exclusive, split at newlines, empty matches dropped) and
   context `Block`s (windows of `context_lines`, merged when they overlap or touch).

Zoekt conventions kept on purpose: a file that matched only by its path, or was
selected without any match position (`r:`, `lang:`, `type:filename`), comes back
with no `LineMatch` (Zoekt's `FileName` pseudo-match, which the Zoekt client drops
too); so does a file whose only matches were empty (`x*`). `match_count` counts
matching lines, plus one per such path-only file (Zoekt's `MatchCount` in line
mode). `type:repo` returns one `FileMatch` per repository, with an empty path.

This module orchestrates steps 1-5 (candidates, batches, limits, ranking, paging,
notes, `type:repo`). Reads the index through the store's methods (`candidate_files`,
`file_texts`, the symbol lookups); writes nothing. The SQL conditions it passes them are
built in `search/lexical/sql.py`, per-file verification (step 3) in
`search/lexical/eval.py`, scoring primitives and line shaping in
`search/lexical/rank.py`, a file's score and order (step 4) in
`search/lexical/file_score.py`, the page's `FileMatch`es (step 5) in
`search/lexical/page.py`, file-name search in `search/lexical/files.py` and
`explain` in `search/lexical/explain.py`. What stays here is the part that shares one
query's plan, limits and page: the candidates, the batches, the answers kept in the
process, `type:repo` and the notes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.lexical.batch import BatchResult, BatchVerifier, ShapedFile
from ctxd.search.lexical.eval import Doc, FileEval, Plan, Row, walk_nodes
from ctxd.search.lexical.explain import explain_query
from ctxd.search.lexical.file_score import (
    Hit,
    Shaped,
    and_words,
    file_score,
    line_count,
    rank_key,
    score_file,
    shape,
    words_near,
)
from ctxd.search.lexical.files import search_file_names
from ctxd.search.lexical.limits import check_page_limits, check_term_count
from ctxd.search.lexical.page import doc_of, file_match
from ctxd.search.lexical.query import (
    And,
    Lang,
    Node,
    Not,
    Or,
    RepoSet,
    ResultType,
    Type,
    parse,
    simplify,
)
from ctxd.search.lexical.rank import Span
from ctxd.search.lexical.sql import CondOp, language_names, render_cond
from ctxd.search.lexical.texts import TEXTS, FileText
from ctxd.search.models import FileMatch, LexicalResult

CONTENT_BATCH = 64
"""Candidate files whose text is read per SQL statement."""


# -- the engine ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    plan: Plan
    hits: list[Hit]
    scanned_files: int
    scanned_bytes: int
    bounded: bool
    """No condition narrowed the text: files were scanned under the byte budget."""
    stopped: str | None = None
    """Why evaluation stopped early: "scan" (byte budget) or "matches" (match limit)."""
    kept: dict[int, tuple[Doc, Shaped]] = field(default_factory=dict)
    """The best-ranked files' evaluated text and matches, by file id, so that showing them
    needs no second read or evaluation (never cached: see `EmbeddedLexical._ranked`)."""

    @property
    def partial(self) -> bool:
        return self.stopped is not None


KEEP_AT_MOST = 100
"""A page ending after this many files re-reads and re-evaluates its files instead of
keeping them from the ranking pass (memory)."""

CACHE_ENTRIES = 64
"""Ranked answers kept in the process (the newest), shared by every connection."""
CACHE_MAX_HITS = 5_000
"""Answers with more matching files are not kept (memory)."""
EVALUATIONS_AT_ONCE = 2
"""Query evaluations running at once in the process; more threads would only take turns
holding the GIL, so every one of them would finish late."""

_Key = tuple[str, str, int, int]
"""(index file, query, scan limit, match limit)."""
_CacheEntry = tuple[int, _Outcome, list[Hit]]
_ANSWERS: OrderedDict[_Key, _CacheEntry] = OrderedDict()
_IN_FLIGHT: dict[_Key, threading.Event] = {}
_ANSWERS_LOCK = threading.Lock()
_EVALUATIONS = threading.BoundedSemaphore(EVALUATIONS_AT_ONCE)


class EmbeddedLexical:
    """Zoekt-compatible lexical search over the index's trigram table (no server)."""

    name = "embedded"

    def __init__(
        self, store: IndexStore, *, scan_limit_bytes: int = 64 << 20, match_limit: int = 100_000,
        batch: bool = True,
    ) -> None:
        """An engine over one open index.

        Args:
            store: the index (read through `IndexStore.query` and `file_texts` only).
            scan_limit_bytes: text read at most when nothing narrows a query (no trigram).
            match_limit: matching lines after which evaluation stops (partial result),
                like Zoekt's per-shard match limit.
            batch: verify and score a batch of candidates at once where the query allows
                (`search.lexical.batch`); False: one file at a time (the same answers).
        """
        self.store = store
        self.scan_limit_bytes = scan_limit_bytes
        self.match_limit = match_limit
        self.batch = batch

    # -- public API ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        max_files: int = 30,
        context_lines: int = 3,
        repos: Sequence[str] | None = None,
        offset: int = 0,
    ) -> LexicalResult:
        """Run a Zoekt query; return up to `max_files` files (after `offset`), best first.

        Args:
            query: Zoekt query syntax (see `search/lexical/query.py`).
            max_files: files to return; `file_count` still counts every match.
            context_lines: lines of context around each match, merged into `blocks`.
            repos: restrict to these repository names (None: all).
            offset: skip this many ranked files (paging).

        Raises:
            QueryError: the query does not parse (message has the position, plus a hint).
            ValidationError: a negative or zero limit.
        """
        started = time.perf_counter()
        check_page_limits(max_files=max_files, context_lines=context_lines, offset=offset)
        parsed = parse(query)
        check_term_count(parsed)
        root = self._restrict(parsed, repos)
        notes = self._notes(root, repos)
        if isinstance(root, Type) and root.kind == ResultType.REPO:
            return self._repo_result(root.child, started, notes)
        root = self._resolve_repo_types(root)
        end = offset + max_files
        outcome, hits = self._ranked(root, keep=end if end <= KEEP_AT_MOST else 0)
        page = hits[offset:end]
        # A plan reads through its connection and memoizes as it goes: an answer another
        # thread's connection computed gets a plan of this connection's own.
        plan = outcome.plan if outcome.plan.store is self.store else Plan(self.store, root)
        files: list[FileMatch] = []
        for i in range(0, len(page), CONTENT_BATCH):  # texts read a batch at a time
            batch = page[i : i + CONTENT_BATCH]
            unread = [h.row for h in batch if h.row.id not in outcome.kept]
            texts = (self._file_texts([r.id for r in unread])
                     if plan.needs_content and unread else {})
            shown = {**outcome.kept, **self._shaped_again(plan, unread, texts)}
            files += (
                file_match(plan, h, context_lines, texts.get(h.row.id), shown)
                for h in batch
            )
        notes += self._scan_notes(outcome)
        return LexicalResult(
            files=files,
            match_count=sum(h.lines for h in hits),
            file_count=len(hits),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            partial=outcome.partial,
            notes=tuple(notes),
        )

    def search_files(
        self, pattern: str, *, max_files: int = 50, repos: Sequence[str] | None = None
    ) -> LexicalResult:
        """Files whose path matches a glob (`*.py`, `src/**/test_*.py`), a regex or text.

        How a pattern is read, matched and ranked: `search.lexical.files.search_file_names`.

        Raises:
            QueryError: empty pattern or invalid regex.
            ValidationError: `max_files` below 1.
        """
        check_page_limits(max_files=max_files, context_lines=0, offset=0)
        return search_file_names(self.store, pattern, max_files=max_files, repos=repos)

    def explain(self, query: str) -> str:
        """The parsed query, each atom's literal/trigram plan and the candidate SQL.

        Raises:
            QueryError: the query does not parse.
        """
        return explain_query(self.store, query, self.scan_limit_bytes)

    # -- internals ---------------------------------------------------------------------------

    def _ranked(self, root: Node, *, keep: int = 0) -> tuple[_Outcome, list[Hit]]:
        """Every matching file, ranked; when evaluated now, the best `keep` files are kept
        evaluated (`_Outcome.kept`).

        Answers are kept for the whole process and reused while the index's text has not
        changed (`Store.text_generation`, which every connection and process sees; an
        embedding commit does not move it). A query another thread is evaluating is
        waited for, not evaluated twice, and at most `EVALUATIONS_AT_ONCE` evaluations
        run at a time, so concurrent clients asking the same query, and the pages after
        the first, skip the work.
        """
        key = (self.store.location, repr(root), self.scan_limit_bytes, self.match_limit)
        while True:
            version = self.store.text_generation()
            with _ANSWERS_LOCK:
                found = _ANSWERS.get(key)
                if found is not None and found[0] == version:
                    _ANSWERS.move_to_end(key)
                    return found[1], found[2]
                running = _IN_FLIGHT.get(key)
                if running is None:
                    mine = _IN_FLIGHT[key] = threading.Event()
                    break
            running.wait()  # then look again: usually its answer is there now
        try:
            with _EVALUATIONS:
                outcome = self._run(root, keep=keep, generation=version)
            hits = sorted(outcome.hits, key=rank_key)
            if len(hits) <= CACHE_MAX_HITS:
                with _ANSWERS_LOCK:
                    _ANSWERS[key] = (version, replace(outcome, kept={}), hits)
                    while len(_ANSWERS) > CACHE_ENTRIES:
                        _ANSWERS.popitem(last=False)
            return outcome, hits
        finally:
            with _ANSWERS_LOCK:
                del _IN_FLIGHT[key]
            mine.set()

    def _restrict(self, root: Node, repos: Sequence[str] | None) -> Node:
        if repos is None:
            return root
        only = RepoSet(frozenset(repos))
        if isinstance(root, Type):
            return Type(root.kind, simplify(And((only, root.child))))
        return simplify(And((only, root)))

    def _notes(self, root: Node, repos: Sequence[str] | None) -> list[str]:
        notes: list[str] = []
        if repos is not None:
            known = set(self.store.repo_names())
            missing = sorted(set(repos) - known)
            if missing:
                notes.append(f"unknown repositories ignored: {', '.join(missing)}")
        langs = [n for n in walk_nodes(root) if isinstance(n, Lang)]
        if langs:
            present = {lang.lower() for lang in self.store.file_languages()}
            notes.extend(
                f"lang:{lang.name} matches no indexed file; languages in the index: "
                + ", ".join(sorted(present))
                for lang in langs
                if not language_names(lang.name) & present
            )
        return notes

    def _resolve_repo_types(self, root: Node) -> Node:
        """Replace nested `type:repo` groups by the set of repositories they select."""

        def resolve(node: Node) -> Node:
            if isinstance(node, Type):
                if node.kind == ResultType.REPO:
                    return RepoSet(frozenset(self._matching_repos(resolve(node.child))))
                return Type(node.kind, resolve(node.child))
            if isinstance(node, Not):
                return Not(resolve(node.child))
            if isinstance(node, And | Or):
                kids = tuple(resolve(c) for c in node.children)
                return And(kids) if isinstance(node, And) else Or(kids)
            return node

        return simplify(resolve(root))

    def _matching_repos(self, node: Node) -> list[str]:
        return sorted({h.row.repo for h in self._run(node, score=False).hits})

    def _repo_result(self, child: Node, started: float, notes: list[str]) -> LexicalResult:
        outcome = self._run(self._resolve_repo_types(child), score=False)
        counts: dict[str, int] = {}
        for h in outcome.hits:
            counts[h.row.repo] = counts.get(h.row.repo, 0) + 1
        files = [
            FileMatch(repository=name, path="", language="", score=float(n), matches=())
            for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        notes = [
            *notes,
            "type:repo: one result per repository with a matching file "
            "(path is empty; score = number of matching files)",
        ]
        notes += self._scan_notes(outcome)
        return LexicalResult(
            files=files,
            match_count=len(files),
            file_count=len(files),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            partial=outcome.partial,
            notes=tuple(notes),
        )

    def _run(self, root: Node, *, score: bool = True, keep: int = 0,
             generation: int | None = None) -> _Outcome:
        """Select candidates, verify each, score the matches; keep the best `keep` files'
        evaluated text and matches (`generation`: the index's text generation, when read
        already)."""
        plan = Plan(self.store, root)
        cond = plan.cond(root)
        if cond.op == CondOp.FALSE:
            return _Outcome(plan, [], 0, 0, False)
        where, params = render_cond(cond, self.store.dialect)
        rows = [Row(*r) for r in self.store.candidate_files(where, params)]
        scan = _Scan(plan.needs_content and not cond.selective, keep)
        near = and_words(root)
        fast = (BatchVerifier.of(plan, self._load_sections, near)
                if score and self.batch else None)
        if generation is None:
            generation = self.store.text_generation()
        for i in range(0, len(rows), CONTENT_BATCH):
            batch = rows[i : i + CONTENT_BATCH]
            texts = (self._file_texts([r.id for r in batch], generation)
                     if plan.needs_content else {})
            res = None
            if fast is not None and len(texts) == len(batch):
                res = fast.run(batch, [texts[r.id] for r in batch])
            if res is not None:  # the whole batch verified at once
                self._take_batch(scan, batch, res, near)
            else:
                self._verify_each(scan, plan, batch, texts, score)
            if keep and len(scan.best) > 2 * keep:
                _keep_best(scan.best, keep)
            if scan.stop is not None:
                break
        _keep_best(scan.best, keep)
        kept = {h.row.id: k.get() for h, k in scan.best}
        return _Outcome(plan, scan.hits, scan.files, scan.bytes, scan.bounded, scan.stop, kept)

    def _shaped_again(self, plan: Plan, rows: list[Row], texts: dict[int, FileText]
                      ) -> dict[int, tuple[Doc, Shaped]]:
        """The matches of shown files the ranking did not keep (a long page, an answer
        from the cache), from the batch verifier where it takes the query; {} otherwise
        (`_file_match` evaluates them one by one)."""
        if not (self.batch and rows and len(texts) == len(rows)):
            return {}
        fast = BatchVerifier.of(plan, self._load_sections, and_words(plan.root))
        res = fast.run(rows, [texts[r.id] for r in rows]) if fast is not None else None
        if res is None:
            return {}
        return {r.id: _Kept(res.file(j)).get() for j, r in enumerate(rows) if res.matched[j]}

    def _stopped(self, scan: _Scan) -> bool:
        """Whether to stop before the next file (`scan.stop` says why)."""
        if scan.bounded and scan.bytes >= self.scan_limit_bytes:
            scan.stop = "scan"
        elif scan.lines >= self.match_limit:
            scan.stop = "matches"
        return scan.stop is not None

    def _take_batch(self, scan: _Scan, batch: list[Row], res: BatchResult, near: int) -> None:
        """A batch the batch verifier took: its matching files as hits, up to a limit; the
        matches of those that rank among the best `scan.keep` so far are kept."""
        fresh: list[tuple[Hit, int]] = []
        for j, row in enumerate(batch):
            if self._stopped(scan):
                break
            if res.matched[j]:
                near_hit = near >= 2 and res.atoms[j] >= near and res.content[j] and (
                    res.near[j] if res.near is not None
                    else words_near(Shaped(content=res.run.pieces(j)), res.run.files[j].data, near))
                hit = Hit(row, file_score(res.best[j], res.atoms[j], near_hit, row.role),
                           res.lines[j])
                scan.hits.append(hit)
                scan.lines += hit.lines
                if scan.keep:
                    fresh.append((hit, j))
            scan.files += 1
            scan.bytes += len(res.run.files[j].data)
        if fresh:  # a file ranked below the best `keep` ones now never rises into them
            fresh.sort(key=lambda p: rank_key(p[0]))
            del fresh[scan.keep:]
            if len(scan.best) >= scan.keep:
                scan.best.sort(key=lambda k: rank_key(k[0]))
                del scan.best[scan.keep:]
                worst = rank_key(scan.best[-1][0])
                fresh = [p for p in fresh if rank_key(p[0]) < worst]
            scan.best += ((hit, _Kept(res.file(j))) for hit, j in fresh)

    def _verify_each(self, scan: _Scan, plan: Plan, batch: list[Row],
                     texts: dict[int, FileText], score: bool) -> None:
        """A batch verified file by file (`FileEval`), up to a limit."""
        matched: list[tuple[Doc, Shaped, int]] = []
        for row in batch:
            if self._stopped(scan):
                break
            doc = doc_of(row, texts.get(row.id))
            ev = FileEval(plan, doc)
            if ev.eval(plan.root):
                if score:
                    spans: list[Span] = []
                    atoms = ev.collect(plan.root, spans)
                    shaped = shape(spans, doc)
                    matched.append((doc, shaped, atoms))
                    scan.lines += line_count(shaped)
                else:
                    scan.hits.append(Hit(row, 0.0, 0))
            if doc.text is not None:
                scan.files += 1
                scan.bytes += len(doc.data)
        scored = self._score(plan, matched)
        scan.hits += scored
        if scan.keep:
            pairs = zip(scored, matched, strict=True)
            scan.best += ((h, _Kept((doc, shaped))) for h, (doc, shaped, _) in pairs)

    def _file_texts(self, ids: list[int], generation: int | None = None) -> dict[int, FileText]:
        """The files' texts, kept in the process while the index's text stays the same."""
        if generation is None:
            generation = self.store.text_generation()
        return TEXTS.files(self.store, ids, generation)

    def _load_sections(self, files: dict[int, FileText]) -> None:
        TEXTS.sections(self.store, files)

    def _score(self, plan: Plan, matched: list[tuple[Doc, Shaped, int]]) -> list[Hit]:
        """Score a batch's matching files; the definitions on their matching lines (all the
        score looks at) are read in one statement."""
        lines = {doc.row.id: shaped.content.keys() for doc, shaped, _ in matched if shaped.content}
        near = and_words(plan.root)
        if lines:
            plan.prefetch_symbols(lines)
        return [
            Hit(
                doc.row,
                score_file(
                    shaped, doc, atoms, plan.symbols_of(doc.row.id) if shaped.content else None,
                    near,
                ),
                line_count(shaped),
            )
            for doc, shaped, atoms in matched
        ]

    def _scan_notes(self, outcome: _Outcome) -> list[str]:
        notes = []
        if outcome.stopped == "matches":
            notes.append(
                f"stopped after {self.match_limit} matching lines: results are partial "
                "(files after that were not searched). Narrow the query with a longer "
                "literal or a repo:/lang:/file: filter."
            )
        if outcome.stopped == "scan":
            notes.append(
                "bounded scan: the query has no literal of 3+ characters for the trigram index, "
                f"so files were scanned; stopped after {outcome.scanned_files} files "
                f"({outcome.scanned_bytes} bytes, limit {self.scan_limit_bytes}): results are "
                "partial. Add a longer literal or a repo:/lang:/file: filter."
            )
        elif outcome.bounded:
            notes.append(
                "bounded scan: the query has no literal of 3+ characters for the trigram index; "
                f"{outcome.scanned_files} candidate files ({outcome.scanned_bytes} bytes) "
                "were scanned"
            )
        return notes


@dataclass(slots=True)
class _Scan:
    """One evaluation's progress over the candidates."""

    bounded: bool
    """No condition narrowed the text: files are scanned under the byte budget."""
    keep: int
    hits: list[Hit] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    lines: int = 0
    stop: str | None = None
    best: list[tuple[Hit, _Kept]] = field(default_factory=list)


class _Kept:
    """A ranked file's evaluated text and matches: as the per-file path shaped them, or
    shaped from the batch verifier's arrays when asked (`ShapedFile.shaped`)."""

    __slots__ = ("_made",)

    def __init__(self, made: tuple[Doc, Shaped] | ShapedFile) -> None:
        self._made = made

    def get(self) -> tuple[Doc, Shaped]:
        made = self._made
        if isinstance(made, tuple):
            return made
        doc, content, path = made.shaped()
        if content is not None:
            return doc, Shaped(content=content)
        if path is not None:
            return doc, Shaped(path=path)
        return doc, Shaped(whole_path=True)


def _keep_best(kept: list[tuple[Hit, _Kept]], n: int) -> None:
    """Keep the `n` best-ranked entries (in place)."""
    if len(kept) > n:
        kept.sort(key=lambda k: rank_key(k[0]))
        del kept[n:]
