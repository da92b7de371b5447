"""Re-deciding files when the rules change: the repository options whose change makes a
full run decide every file again (`REDECIDE_KEYS`: its role, chunks and code graph), what
a run derives from them (`run_options`: re-judge, re-chunk which languages, re-extract
graphs), and the backfills that bring files indexed before a feature up to date
(`Backfills`).

Invariants: a run records the new values only once it has gone through every file and
the backfills (`Indexer.index`); until then the repository holds the old ones, so a
stopped or killed run leaves the next full run to re-decide the files it did not reach.
The backfills work from stored text (no re-reading of the tree) and are full runs' only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ctxd.indexer.checkpoints import graph_row, summary_of
from ctxd.indexer.chunk.chunker import ChunkOptions
from ctxd.indexer.chunk.grammars import PARSED_BEFORE_RECORD, parsed_languages
from ctxd.indexer.graph.model import EXTRACTION as GRAPH_EXTRACTION
from ctxd.indexer.graph.specs import SPECS as GRAPH_LANGUAGES
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import RepoRow
from ctxd.indexer.walk.judge import FileJudge
from ctxd.indexer.walk.repo_options import EXPLICIT_KEY
from ctxd.indexer.walk.textclass import RULES_VERSION
from ctxd.indexer.walk.walker import WalkOptions

CHUNK_READ_BATCH = 64
"""Texts read back per statement by phase 1's chunking pass."""
PARSED_KEY = "parsed_languages"
"""The repository option that records which languages were cut by their syntax
(`indexer.chunk.grammars.parsed_languages`): a full run chunks the files of a language
parsed since (a new grammar) or parsed otherwise since (`PARSE_REVISIONS`) again, so that
they get symbols and definition-aligned checkpoints without being edited."""
GRAPH_KEY = "graph_extraction"
"""The repository option that records which extractor made its code graphs
(`indexer.graph.model.EXTRACTION`): another one makes the next full run extract them all
again."""
TEXT_RULE_KEYS = ("lexical_only_rules", "lexical_only_patterns", "embed_allow",
                  "rules_version")
"""Walk options that decide a file's role (and the version of the built-in rules): a
repository whose stored values differ is re-read (`Role`s and secrets re-decided) even
where the stat is unchanged."""
REDECIDE_KEYS = (*TEXT_RULE_KEYS, GRAPH_KEY, PARSED_KEY)
"""Options whose change makes a full run decide every file again (its role, its chunks,
its code graph). A run records the new values only once it has gone through every file
and the backfills (a full run, not stopped); a partial run (the watcher's), a stopped or a
killed one keeps the old ones, so that the next full run re-decides the files it did not
reach."""


@dataclass(frozen=True, slots=True)
class FileRun:
    """What every file of one run is judged by."""

    judge: FileJudge
    recheck: bool
    """The text rules changed since the last run: ignore the stat shortcut."""
    rechunk: frozenset[str] = frozenset()
    """Languages parsed now but not when the repository was last indexed (`PARSED_KEY`):
    their files are chunked again even where unchanged."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The options one run records and what it re-decides because of them."""

    wanted: dict[str, Any]
    """The repository's options as this run indexes it (recorded once it has gone through)."""
    held: dict[str, Any]
    """What the repository records until then (`REDECIDE_KEYS` keep their stored values)."""
    recheck: bool
    """The text rules changed since the last run: ignore the stat shortcut."""
    rechunk: frozenset[str]
    """Languages parsed now but not when the repository was last indexed."""
    regraph: bool
    """The graph's extractor changed: the backfill extracts every file's graph again."""


def run_options(options: WalkOptions, explicit: Iterable[str], existing: RepoRow | None
                ) -> RunOptions:
    """The options a run over `existing` (None: a new repository) records, and what
    changed since its last run."""
    opts_json: dict[str, Any] = {
        "include_patterns": list(options.include_patterns),
        "exclude_patterns": list(options.exclude_patterns),
        "max_file_size": options.max_file_size,
        "sensitive_excludes": options.sensitive_excludes,
        "sensitive_allow": list(options.sensitive_allow),
        "use_gitignore": options.use_gitignore,
        "lexical_only_rules": options.lexical_only_rules,
        "lexical_only_patterns": list(options.lexical_only_patterns),
        "embed_allow": list(options.embed_allow),
        "rules_version": RULES_VERSION,
        GRAPH_KEY: GRAPH_EXTRACTION,
        PARSED_KEY: parsed_languages(),
        EXPLICIT_KEY: sorted(set(explicit)),
    }
    held = dict(opts_json)  # what the repository records until this run has gone through
    rechunk: frozenset[str] = frozenset()
    if existing is not None:
        held.update({k: existing.options.get(k) for k in REDECIDE_KEYS})
        before: list[str] = existing.options.get(PARSED_KEY, sorted(PARSED_BEFORE_RECORD))
        held[PARSED_KEY] = before
        rechunk = frozenset(lang.partition("@")[0]  # `c@2`: the language is `c`
                            for lang in set(parsed_languages()) - set(before))
    recheck = existing is not None and any(held[k] != opts_json[k] for k in TEXT_RULE_KEYS)
    regraph = existing is not None and held[GRAPH_KEY] != GRAPH_EXTRACTION
    return RunOptions(opts_json, held, recheck, rechunk, regraph)


class Backfills:
    """`Indexer`'s backfills: rows of files indexed before their feature existed."""

    store: IndexStore
    chunk_options: ChunkOptions

    def backfill_graphs(self, repo_id: int, *,
                        should_stop: Callable[[], bool] = lambda: False,
                        every: bool = False) -> int:
        """Write the code graphs of files indexed before the graph existed (`every`: of
        every file, indexed by an older extractor: `GRAPH_EXTRACTION`), parsed again from
        their stored text, `CHUNK_READ_BATCH` files a transaction; returns how many files
        got a row. Full runs only (a stop request ends it between batches; the next full
        run goes on with the files that have no row)."""
        todo = self.store.files_without_graph(repo_id, sorted(GRAPH_LANGUAGES), every=every)
        done = 0
        for start in range(0, len(todo), CHUNK_READ_BATCH):
            if should_stop():
                break
            part = todo[start : start + CHUNK_READ_BATCH]
            texts = self.store.file_texts([fid for fid, _p, _l in part])
            items = [(fid, graph_row(path, lang, texts[fid],
                                     self.chunk_options.parse_budget_ms))
                     for fid, path, lang in part if fid in texts]
            self.store.put_graphs(repo_id, items)
            done += len(items)
        return done

    def backfill_summaries(self, repo_id: int) -> int:
        """Write the summaries of files indexed before summaries existed, from their stored
        text and symbols (no re-chunking); returns how many files got a row. Full runs
        only: a watcher's batch writes the summaries of the files it changes."""
        items = [
            (file_id, path, summary_of(path, language, text, symbols))
            for file_id, path, language, text, symbols in self.store.files_without_summary(
                repo_id)
        ]
        if items:
            self.store.put_summaries(repo_id, items)
        return len(items)
