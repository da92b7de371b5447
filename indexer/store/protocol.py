"""What every store of the index offers, whatever engine holds it: `IndexStore`.

One protocol per concern, each implemented once for SQLite (`indexer.store.sqlite`,
composed into `indexer.store.sqlite.store.Store`) and once for PostgreSQL
(`indexer.store.pg`, composed into `indexer.store.pg.store.PgStore`):

- `Connection`: lifecycle, transactions, read snapshots, the generations caches key on,
  `meta`, space, and `query()`, which runs read-only SQL in the dialect both engines
  speak (`?` placeholders; engine-specific predicates come from `dialect`), as the
  statements of `Lookups` do;
- `Repos`, `Files`, `Pending`, `Coverage`: the bookkeeping and the indexed text;
- `VectorRows` (`indexer.store.vector_rows`) plus `VectorSearch`: the vectors and the
  nearest-neighbour search the engine does itself (a sqlite-vec scan, a pgvector HNSW
  index);
- `KeywordSearch`: BM25 over the checkpoints' words (FTS5; PostgreSQL full text), and
  the common terms' postings where the engine can hand them out (SQLite's FTS5);
- `Lookups`: the search layer's small reads (repository and language lists, a file's id,
  symbol rows), written once for both engines in `indexer.store.lookups`.

`IndexStore` is all of them: the type the pipeline, the search layer and the service
hold. `indexer.store.open.open_store` opens one from a location. Imported for typing
only; nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.dialect import Dialect
from ctxd.indexer.store.records import (
    FileRecord,
    GraphRow,
    PendingChunk,
    RepoRow,
    StoredFile,
    Summary,
    TermPostings,
)
from ctxd.indexer.store.vector_rows import VectorRows

if TYPE_CHECKING:  # numpy only where vectors are read: settings and help stay light
    import numpy as np
    import numpy.typing as npt

Row = tuple[Any, ...]


class Connection(Protocol):
    """One connection to the index (one per thread)."""

    @property
    def engine(self) -> str:
        """`sqlite` or `postgresql`."""
        ...

    @property
    def location(self) -> str:
        """Where the index is, fit to show and to key caches on: the SQLite file's path, or
        the PostgreSQL URL without its password."""
        ...

    @property
    def dialect(self) -> Dialect: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

    def reopen(self) -> IndexStore:
        """Another connection to the same index (for a background thread)."""
        ...

    def transaction(self, *, savepoints: bool = True) -> AbstractContextManager[None]:
        """One write transaction (a savepoint inside another), rolled back on any error.
        With `savepoints=False`, the transactions nested in it join it instead of making
        savepoints: for a batch of writes dropped whole on any error."""
        ...

    def read_snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one consistent state of the index (never blocks a writer)."""
        ...

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Run a read-only statement in the portable SQL (`?` placeholders), as the
        engine-neutral `Lookups` do."""
        ...

    def text_generation(self) -> int:
        """Grows with every change to the indexed text, as every connection sees it."""
        ...

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index may have changed as seen by this connection."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def file_bytes(self) -> int:
        """The index's size on disk."""
        ...

    def reclaimable_bytes(self) -> int:
        """Space inside the index that `compact` gives back."""
        ...

    def checkpoint(self) -> None:
        """Settle a large write (SQLite: copy the WAL into the file)."""
        ...

    def compact(self) -> tuple[int, int]:
        """Give free space back; the size before and after."""
        ...


class Repos(Protocol):
    """The repositories (`indexer.store.sqlite.repos`)."""

    def repos(self) -> list[RepoRow]: ...

    def repo_by_root(self, root: str) -> RepoRow | None: ...

    def repo_by_name(self, name: str) -> RepoRow | None: ...

    def upsert_repo(self, root: str, options: dict[str, Any], now: str,
                    root_id: str = "") -> RepoRow: ...

    def mark_indexed(self, repo_id: int, now: str | None) -> None: ...

    def remove_repo(self, repo_id: int) -> None:
        """Delete a repository with every row of it, then the vectors nobody uses."""
        ...


class Files(Protocol):
    """A file's rows, written and removed together (`indexer.store.sqlite.files`)."""

    def stored_files(self, repo_id: int) -> dict[str, StoredFile]: ...

    def stored_paths(self, repo_id: int, paths: Sequence[str]) -> set[str]:
        """Which of `paths` the repository holds (any number of them)."""
        ...

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None: ...

    def replace_file(
        self,
        repo_id: int,
        record: FileRecord,
        content: str,
        chunks: Iterable[tuple[Chunk, str]],
        symbols: Iterable[Symbol],
        now: str,
        summary: Summary = ...,
        graph: GraphRow = ...,
    ) -> int: ...

    def files_without_summary(self, repo_id: int
                              ) -> list[tuple[int, str, str, str, list[Symbol]]]: ...

    def put_summaries(self, repo_id: int, items: Sequence[tuple[int, str, Summary]]) -> None: ...

    def put_graphs(self, repo_id: int, items: Sequence[tuple[int, GraphRow]]) -> None:
        """Store (file id, code graph) rows in one transaction (the backfill)."""
        ...

    def delete_files(self, repo_id: int, paths: Iterable[str]) -> int: ...

    def file_texts(self, file_ids: Sequence[int]) -> dict[int, str]:
        """The full text of the files with these ids (those that exist)."""
        ...

    def stored_text(self, repo_id: int, path: str) -> str | None:
        """The indexed text of the file at `path` of a repository (None: no such file)."""
        ...


@runtime_checkable
class TextFirst(Protocol):
    """A store that writes a file's text ahead of its checkpoints, so that phase 1 makes
    every file greppable before it chunks any (`indexer.store.files`; the pipeline uses
    it where the store has it, else one `replace_file` a file)."""

    def put_file_text(self, repo_id: int, record: FileRecord, content: str, now: str) -> int:
        """Write the file's row and text; its other rows wait for `replace_file` with
        `content=None`. The row is marked unfinished until then."""
        ...

    def bulk_text(self) -> AbstractContextManager[None]:
        """Settings for a walk that writes many texts in a row (search is the same)."""
        ...

    def compact_text(self, should_stop: Callable[[], bool] = ...) -> bool:
        """Merge the text index's parts after a walk that wrote many texts, in steps that
        `should_stop` can end between; whether it merged everything."""
        ...

    def text_merge_unfinished(self) -> bool:
        """Whether a `compact_text` was stopped part-way (a later full run finishes it)."""
        ...

    def replace_file(
        self,
        repo_id: int,
        record: FileRecord,
        content: str | None,
        chunks: Iterable[tuple[Chunk, str]],
        symbols: Iterable[Symbol],
        now: str,
        summary: Summary = ...,
        graph: GraphRow = ...,
    ) -> int: ...


class Pending(Protocol):
    """What is left to embed (`indexer.store.sqlite.pending`)."""

    def pending_chunks(self, repo_id: int | None = None) -> list[PendingChunk]: ...

    def pending_summaries(self, repo_id: int | None = None) -> list[tuple[str, str]]: ...

    def count_pending(self, repo_id: int | None = None) -> int: ...


class Coverage(Protocol):
    """Counts and roles for status and result notes (`indexer.store.sqlite.coverage`)."""

    def lexical_only_files(
        self, repo_id: int, sample: int
    ) -> tuple[dict[str, int], list[tuple[str, str]]]: ...

    def file_roles(self, paths: Sequence[str]) -> dict[tuple[str, str], str]: ...

    def unembedded_spans(self, paths: Sequence[str]) -> set[tuple[str, str, int, int]]: ...

    def repo_counts(self, repo_id: int) -> dict[str, int]: ...

    def checkpoint_total(self) -> int:
        """How many checkpoints the index holds (all repositories)."""
        ...


class VectorSearch(Protocol):
    """Nearest neighbours found by the engine itself (`indexer.store.sqlite.vectors`)."""

    def nearest(
        self, vector: Sequence[float], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of (about) the `k` vectors nearest to `vector` by L2
        distance, in no particular order: the caller ranks them exactly. Fewer than `k`
        only when the index holds fewer. `k` is at most `NEAREST_MAX`."""
        ...

    def scan_nearest(self, vector: Sequence[float], where: str,
                     params: Sequence[object]) -> list[tuple[int, float]]:
        """(id, L2 distance) of every vector of the checkpoints that pass `where` (an
        `AND ...` fragment on `checkpoints c` joined with `repos r`), nearest first."""
        ...

    @property
    def filtered_index_scan(self) -> bool:
        """Whether `nearest_in` walks an index that stops once `k` rows pass the filter
        (pgvector's iterative scan): its cost then does not grow with the share of rows
        the filter lets through. False where it reads the filtered ids first (sqlite-vec),
        which costs in proportion to them."""
        ...

    def vectors_where(self, where: str, params: Sequence[object]
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of every vector of the checkpoints that pass `where` (as in
        `scan_nearest`), in no particular order: a small scope's vectors, for a caller that
        ranks them itself (and may keep them while the store's generation stays)."""
        ...

    @property
    def scope_key(self) -> str | None:
        """A key shared by every connection of the process to this store, where its
        `generation()` is the database's (the same on each): the search layer then shares
        what it reads per generation among them (`search.scoped`). None where the
        generation is the connection's own (SQLite's `data_version`)."""
        ...

    def exact_rows_max(self) -> int:
        """Up to how many filtered-in checkpoints `nearest_in` ranks them all exactly
        rather than walking its index with the filter (0 where it has no such choice:
        sqlite-vec). A caller that counts the checkpoints of a filter up to one more than
        this passes the count to `nearest_in` as `rows`."""
        ...

    def nearest_in(
        self, vector: Sequence[float], k: int, where: str, params: Sequence[object], *,
        rows: int | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of (about) the `k` vectors nearest to `vector` among those
        of the checkpoints that pass `where` (as in `scan_nearest`), in no particular
        order: the filter applied inside the engine's search, not after it. Fewer than
        `k` only when fewer pass. `k` is at most `NEAREST_MAX`. `rows`: how many
        checkpoints pass `where`, when the caller counted them (`exact_rows_max`)."""
        ...

    def explain_nearest(self) -> str:
        """How `nearest` searches, for `ctxd search --explain`."""
        ...


class KeywordSearch(Protocol):
    """BM25 over the checkpoints' words: path, symbol and text (`indexer.store.sqlite.keywords`)."""

    def keyword_scores(
        self, terms: Sequence[str], *, where: str = "", params: Sequence[object] = (),
        limit: int | None = None, above: int = 0,
    ) -> list[tuple[int, float]]:
        """(checkpoint id, score) of the checkpoints holding any of `terms` (each a word
        or an identifier, matched as the index tokenizes it), best first, ties by id. The
        score is FTS5's `-bm25()` with the path, symbol and text columns weighted
        `COLUMN_WEIGHTS`. `where` (`AND ...` on `checkpoints c` joined with `repos r`)
        filters them; `above`: only ids larger than it; `limit`: the best that many."""
        ...

    def keyword_count(self, term: str) -> int:
        """How many checkpoints hold `term`."""
        ...

    def explain_keywords(self, terms: Sequence[str]) -> str:
        """How `keyword_scores` asks for `terms`, for `ctxd search --explain`."""
        ...

    def index_terms(self, word: str) -> tuple[str, ...]:
        """The terms the keyword index makes of `word` (its tokenizer and stemmer): the
        keys of `keyword_postings`; several for an identifier read as a phrase."""
        ...

    def keyword_postings(self, min_df: int) -> TermPostings | None:
        """The postings of every term held by at least `min_df` checkpoints, read in one
        read transaction (not inside another one), for scoring them in memory exactly as
        `keyword_scores` does (`search.keyword_index`; `TermPostings.bm25` says in whose
        order of operations); None where the engine has none to read."""
        ...


class Lookups(Protocol):
    """The search layer's small reads, one portable implementation for every engine
    (`indexer.store.lookups`)."""

    def repo_names(self) -> list[str]:
        """Every repository's name."""
        ...

    def repo_ids(self) -> dict[str, int]:
        """Repository name -> id, for every repository."""
        ...

    def file_languages(self) -> list[str]:
        """The distinct languages of the indexed files (as stored)."""
        ...

    def file_id(self, repository: str, path: str) -> int | None:
        """The id of the file at `path` in the repository named `repository`, if indexed."""
        ...

    def enclosing_symbol(self, repository: str, path: str, line: int) -> Row | None:
        """(name, container) of the innermost definition of the file whose lines (from its
        name's line to its end) hold `line`; None where no definition does."""
        ...

    def enclosing_symbols(
        self, places: Sequence[tuple[str, str, int]]
    ) -> list[tuple[str, str | None] | None]:
        """`enclosing_symbol` of each (repository, path, line), in order, read in one
        statement (per a few hundred places)."""
        ...

    def symbol_name_counts(self) -> list[tuple[str, int]]:
        """(name, how many definitions bear it) of every distinct symbol name."""
        ...

    def file_symbols(self, file_id: int) -> list[tuple[str, str, int]]:
        """(name, kind, line) of every definition in the file `file_id`."""
        ...

    def symbols_on_lines(self, lines: Mapping[int, Iterable[int]]) -> list[Row]:
        """(file id, name, kind, line) of the definitions on the given lines of a batch of
        files, in one statement: `lines` maps a file id to line numbers."""
        ...

    def symbols_where(self, where: str, params: Sequence[object]) -> list[Row]:
        """(file id, name, kind, line) of the definitions `symbols s` that pass `where` (a
        condition on `s` in `query()`'s portable SQL, with its `params`)."""
        ...

    def symbol_kinds(self) -> list[str]:
        """The distinct (lower-case) kinds of the symbols in the index, sorted."""
        ...

    def symbol_rows(self, where: str, params: Sequence[object]) -> list[Row]:
        """(name, kind, repository, path, line, container, language, end line) of the
        definitions `symbols s` (joined with `repos r`) that pass `where`."""
        ...

    def max_checkpoint_id(self) -> int:
        """The largest checkpoint id (0 without checkpoints)."""
        ...

    def checkpoint_rows(self, ids: Sequence[int]) -> dict[int, Row]:
        """Checkpoint id -> (repository, path, language, start, end, symbol, text, id) of
        the checkpoints `ids` that exist."""
        ...

    def vector_checkpoints(self, vector_ids: Sequence[int], where: str,
                           params: Sequence[object]) -> list[Row]:
        """(vector id, repository, path, language, start, end, symbol, text, checkpoint id)
        of the checkpoints whose text has one of `vector_ids` and that pass `where` (an
        `AND ...` fragment on `checkpoints c` joined with `repos r`)."""
        ...

    def summary_vectors(self, paths: Sequence[str]) -> list[Row]:
        """(repository, path, language, vector bytes) of the embedded file summaries at
        `paths` (in any repository)."""
        ...

    def candidate_files(self, where: str, params: Sequence[object]) -> list[Row]:
        """(id, repository id, repository, path, language, size) of the files `files f`
        (joined with `repos r`) that pass `where`, by repository and path."""
        ...

    def repo_ids_named(self, names: Sequence[str]) -> list[int]:
        """The ids of the repositories named `names` (those indexed)."""
        ...

    def checkpoints_in_repos(self, names: Sequence[str]) -> int:
        """How many checkpoints the repositories named `names` hold."""
        ...

    def vector_ids_where(self, where: str, params: Sequence[object]) -> list[int]:
        """The ids of the vectors of the checkpoints (`checkpoints c` joined with `repos r`)
        that pass `where` (an `AND ...` fragment)."""
        ...

    def checkpoints_where(self, where: str, params: Sequence[object], cap: int) -> int:
        """How many checkpoints (`checkpoints c` joined with `repos r`) pass `where`,
        counted up to `cap` (a larger count reads as `cap`)."""
        ...

    def file_paths_in(self, names: Sequence[str], *, after: int = 0,
                      limit: int | None = None) -> list[tuple[int, str]]:
        """(id, path) of every file of the repositories named `names` (all when empty);
        with `limit`, a page: at most `limit` of them, the smallest ids above `after`,
        by id."""
        ...

    def graph_data(self, file_ids: Sequence[int]) -> dict[int, bytes]:
        """File id -> its encoded code graph (`indexer.graph.model.encode`), for the files
        of `file_ids` that have one."""
        ...

    def files_without_graph(self, repo_id: int, languages: Sequence[str], *,
                            every: bool = False) -> list[tuple[int, str, str]]:
        """(id, path, language) of a repository's embedded files in `languages` that have
        no graph row (indexed before the code graph existed), by path; `every`: with a
        graph row or not (an older extractor's rows, extracted again)."""
        ...

    def graph_linked(self, repo_id: int, keys: Sequence[str]) -> list[int]:
        """The ids of the files of a repository found under any of `keys` (the last parts
        of the modules they import: `indexer.graph.links.link_keys`), by id."""
        ...

    def graph_links(self, repo_id: int | None, keys: Sequence[str] | None
                    ) -> list[tuple[str, int]]:
        """(key, file id) of the files of a repository found under each of `keys` (as
        `graph_linked`, each key's files apart; None: under every key), by key and id.
        `repo_id` None: of every repository (no join with `files`: the caller, which
        knows its repository's file ids, keeps its own; a monorepo's keys read ~8x
        cheaper)."""
        ...


class IndexStore(Connection, Repos, Files, Pending, Coverage, VectorRows, VectorSearch,
                 KeywordSearch, Lookups, Protocol):
    """Everything a store of the index offers (see the module docstring)."""


NEAREST_MAX = 4096
"""The largest `k` of `VectorSearch.nearest` (sqlite-vec's limit); beyond it the search
layer scans (`scan_nearest`)."""

COLUMN_WEIGHTS = (3.0, 4.0, 1.0)
"""BM25 weights of the path, symbol and text of a checkpoint, in every engine."""

K1, B = 1.2, 0.75
"""BM25's constants (FTS5's `bm25()`)."""

__all__ = [
    "COLUMN_WEIGHTS",
    "K1",
    "NEAREST_MAX",
    "B",
    "Connection",
    "Coverage",
    "Files",
    "IndexStore",
    "KeywordSearch",
    "Lookups",
    "Pending",
    "Repos",
    "Row",
    "TextFirst",
    "VectorSearch",
]

