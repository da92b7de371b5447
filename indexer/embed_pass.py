"""Phase 2: embed the checkpoint and summary texts that have no vector yet
(`EmbedPass.embed_pending`), and, for a dry run, count what it would embed.

Invariants: a text already embedded anywhere in the index (same hash) is never embedded
again; batches go longest first and each is committed on its own, so semantic search
covers more as it runs and a stop request (between batches) loses no finished work. A
vector depends on its text alone (stored by the text's hash), so one computed while
another write changed the files is still right when committed: at worst no checkpoint
uses it any more, and `gc_embeddings` collects it. That is what lets the watcher hold
the write lock per commit only (`writing`), and write an edited file while the model
runs (`encode`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from ctxd.indexer.checkpoints import embedding_input
from ctxd.indexer.embedder import Embedder, Vectors
from ctxd.indexer.models import Chunk, IndexStats, Progress, ProgressFn
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import serialize_vector

PLAN_STEP = 512
"""Texts per token count of a dry run's plan (one `plan` progress report each)."""


class EmbedPass:
    """`Indexer`'s phase 2 and its dry-run plan."""

    store: IndexStore
    embedder: Embedder
    embed_commit_every: int

    def _dry_run_plan(
        self, inputs: dict[str, tuple[str, int | None]], report: ProgressFn | None = None
    ) -> tuple[int, int]:
        """(texts, word pieces) a real run would embed: new hashes not already in the index.
        Texts whose count the chunker gave are summed, the others counted, in slices,
        each reported as `plan` progress."""
        known = {r[0] for r in self.store.query(
            "SELECT hash FROM embeddings UNION SELECT hash FROM summaries "
            "WHERE vector IS NOT NULL")}
        todo = [item for h, item in inputs.items() if h not in known]
        tokens = 0
        for start in range(0, len(todo), PLAN_STEP):
            if report is not None:
                report(Progress("plan", start, len(todo), "counting tokens to embed"))
            step = todo[start : start + PLAN_STEP]
            tokens += sum(n for _text, n in step if n is not None)
            tokens += sum(self.embedder.count_tokens([t for t, n in step if n is None]))
        if report is not None and todo:
            report(Progress("plan", len(todo), len(todo), "counting tokens to embed"))
        return len(todo), tokens

    def pending_inputs(self, repo_id: int) -> dict[str, tuple[str, int | None]]:
        """The embedding inputs (by hash, token counts unknown) of the repository's texts
        still without a vector: a real run embeds them whatever changed, so a dry run
        counts them too (an interrupted run's, or those over `embed_budget`)."""
        inputs: dict[str, tuple[str, int | None]] = {
            p.hash: (embedding_input(p.path, Chunk(0, 0, p.text, symbol=p.symbol)), None)
            for p in self.store.pending_chunks(repo_id)
        }
        for h, text in self.store.pending_summaries(repo_id):
            inputs.setdefault(h, (text, None))
        return inputs

    def embed_pending(
        self,
        repo_id: int | None = None,
        *,
        progress: ProgressFn | None = None,
        stats: IndexStats | None = None,
        should_stop: Callable[[], bool] | None = None,
        budget: int = 0,
        encode: Callable[[list[str]], Vectors] | None = None,
        writing: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> int:
        """Embed every checkpoint text and file summary without a vector (of one repo, or
        all), at most `budget` checkpoint texts when it is not 0 (the rest wait for the
        next call: `stats.over_budget`); returns how many texts were embedded
        (`stats.chunks_embedded` counts the checkpoint texts among them).

        `encode` runs the model on one batch (default: the embedder). `writing`, when
        given, is entered around each write (the write lock, per commit) instead of the
        caller holding the lock for the whole pass."""
        report = progress or (lambda _p: None)
        run = encode or self.embedder.embed
        locked = writing or nullcontext
        # (hash, text): checkpoint texts first, then summaries (index >= n_chunks).
        pending = [
            (p.hash, embedding_input(p.path, Chunk(0, 0, p.text, symbol=p.symbol)))
            for p in self.store.pending_chunks(repo_id)
        ]
        if stats is not None:
            stats.embed_budget = budget
        if budget and len(pending) > budget:
            if stats is not None:
                stats.over_budget = len(pending) - budget
            del pending[budget:]
        n_chunks = len(pending)
        pending += self.store.pending_summaries(repo_id)
        if not pending:
            return 0
        with locked():
            self.store.ensure_model(self.embedder.name, self.embedder.dimension)
        inputs = [text for _h, text in pending]
        if (expect := getattr(self.embedder, "expect", None)) is not None:
            expect(len(inputs))  # many texts: the bulk encoder loads meanwhile
        order = sorted(range(len(pending)), key=lambda i: len(inputs[i]), reverse=True)
        total, done, chunks_done = len(order), 0, 0
        report(Progress("embed", 0, total))
        step = self.embed_commit_every
        for start in range(0, total, step):
            if should_stop is not None and should_stop():
                if stats is not None:
                    stats.stopped, stats.stopped_in = True, "embed"
                    stats.embeddings_pending = total - done
                break
            idx = order[start : start + step]
            vecs = run([inputs[i] for i in idx])
            blobs = [(i, serialize_vector(v.tolist())) for i, v in zip(idx, vecs, strict=True)]
            with locked():
                self.store.add_embeddings(
                    [(pending[i][0], b) for i, b in blobs if i < n_chunks],
                    [(pending[i][0], b) for i, b in blobs if i >= n_chunks],
                )
            done += len(idx)
            chunks_done += sum(1 for i in idx if i < n_chunks)
            report(Progress("embed", done, total))
        if stats is not None:
            stats.chunks_embedded += chunks_done
        return done
