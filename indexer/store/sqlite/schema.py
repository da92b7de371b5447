"""The SQLite index's schema: numbered migrations, and the tokenizer of its keyword table.

`MIGRATIONS[i]` takes the database from schema version `i` to `i + 1`: `_m001_create_core`
(meta, repos, files, the FTS5 trigram `file_text`, checkpoints, embeddings, symbols),
`_m002_chunk_fts` (the word-level, porter-stemmed `chunk_fts` over checkpoints, for BM25
keyword ranking, its rows from `indexer.store.words.chunk_fts_row`), `_m003_summaries` (one
summary text and its vector per code file), `_m004_file_roles` (what a file is for:
embedded, or kept greppable only), `_m005_root_identity` (the identity of each repository's
root folder), `_m006_text_generation_start` (the text generation from a random start),
`_m007_code_graph` (each code file's graph and the keys it is found by as an importer).
`fts_tokens(word)` is what `chunk_fts`'s tokenizer makes of a word (the keys of the keyword
postings, `KeywordRows.keyword_postings`); it keeps one private in-memory database (no
file) for the tokenizer.

Invariants: migrations are append-only and each runs inside the caller's transaction
(`_run_script` never commits), with `PRAGMA user_version` recording how many ran; the
`vec_embeddings` table is not here: `ensure_model` (`indexer.store.sqlite.vectors`) creates
it once the model's dimension is known.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import sqlean as sqlite3

from ctxd.indexer.store.words import chunk_fts_row

__all__ = ["CHUNK_FTS_TOKENIZE", "MIGRATIONS", "fts_tokens"]


def _run_script(db: sqlite3.Connection, script: str) -> None:
    """Execute `;`-separated statements inside the caller's transaction (executescript
    would commit it)."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _m001_create_core(db: sqlite3.Connection) -> None:
    _run_script(
        db,
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE repos(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            root TEXT NOT NULL UNIQUE,
            options TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            indexed_at TEXT,
            index_started_at TEXT
        );
        CREATE TABLE files(
            id INTEGER PRIMARY KEY,
            repo_id INTEGER NOT NULL REFERENCES repos(id),
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT NOT NULL,
            language TEXT NOT NULL,
            lines INTEGER NOT NULL,
            indexed_at TEXT NOT NULL,
            UNIQUE(repo_id, path)
        );
        CREATE VIRTUAL TABLE file_text USING fts5(content, tokenize='trigram');
        CREATE TABLE checkpoints(
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),
            repo_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            language TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            symbol TEXT,
            symbol_kind TEXT,
            container TEXT,
            text TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE INDEX checkpoints_file ON checkpoints(file_id);
        CREATE INDEX checkpoints_hash ON checkpoints(hash);
        CREATE INDEX checkpoints_repo ON checkpoints(repo_id);
        CREATE TABLE embeddings(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE);
        CREATE TABLE symbols(
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),
            repo_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            language TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            container TEXT,
            line INTEGER NOT NULL,
            end_line INTEGER NOT NULL
        );
        CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE);
        CREATE INDEX symbols_file ON symbols(file_id);
        """
    )


CHUNK_FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The tokenizer of `chunk_fts` (the in-memory keyword postings stem query words with it)."""


def _m002_chunk_fts(db: sqlite3.Connection) -> None:
    """Word-level (porter-stemmed) full text over checkpoints, for BM25 keyword ranking."""
    db.execute(
        "CREATE VIRTUAL TABLE chunk_fts USING fts5(path, symbol, text, "
        f"tokenize='{CHUNK_FTS_TOKENIZE}', content='', contentless_delete=1)"
    )
    rows = db.execute("SELECT id, path, symbol, text FROM checkpoints").fetchall()
    db.executemany(
        "INSERT INTO chunk_fts(rowid, path, symbol, text) VALUES (?, ?, ?, ?)",
        [(r[0], *chunk_fts_row(r[1], r[2], r[3])) for r in rows],
    )


def _m003_summaries(db: sqlite3.Connection) -> None:
    """One row per file: its summary text (`indexer.chunk.summary`), or '' for a file without
    one, and the text's vector once embedded (NULL until then). The vectors stay out of
    `vec_embeddings`: hybrid search reads a few hundred of them by file, never by
    nearest-neighbour search, and the checkpoints' KNN should not see them. Files indexed
    before this migration get theirs from the next index run
    (`Indexer.backfill_summaries`)."""
    _run_script(
        db,
        """
        CREATE TABLE summaries(
            file_id INTEGER PRIMARY KEY REFERENCES files(id),
            repo_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            vector BLOB
        );
        CREATE INDEX summaries_hash ON summaries(hash);
        CREATE INDEX summaries_path ON summaries(path);
        CREATE INDEX summaries_repo ON summaries(repo_id)
        """,
    )


def _m004_file_roles(db: sqlite3.Connection) -> None:
    """`files.role`: '' for code and prose (embedded), else why a file is kept greppable
    only or ranked low (`indexer.walk.textclass.Role`: `lockfile`, `vendored`, `minified`,
    `certificate`, `data`, `generated`). Existing files keep '' until their next change
    or a change of the rules (`Indexer` re-reads a repository whose rules changed)."""
    db.execute("ALTER TABLE files ADD COLUMN role TEXT NOT NULL DEFAULT ''")
    # Few files have a role: hybrid search asks which of its candidates do, per query.
    db.execute("CREATE INDEX files_role ON files(role) WHERE role != ''")


def _m005_root_identity(db: sqlite3.Connection) -> None:
    """`repos.root_id`: the identity (`"<st_dev>:<st_ino>"`) of the root folder when the
    repository was last indexed (`indexer.walk.rootpin`): a root replaced by a symlink or
    another folder since is refused, not read. Existing repositories keep '' (checked by
    path only) until their next index run records it."""
    db.execute("ALTER TABLE repos ADD COLUMN root_id TEXT NOT NULL DEFAULT ''")


def _m006_text_generation_start(db: sqlite3.Connection) -> None:
    """`text_generation` moves up by a random 40-bit step: what a process keeps from the
    text is keyed by (index location, text generation), and an index deleted and made
    again at the same path must not count the same generations as the one it replaced."""
    db.execute(
        "INSERT INTO meta(key, value) VALUES ('text_generation', "
        "CAST(abs(random() % 1099511627776) + 1 AS TEXT)) ON CONFLICT(key) DO UPDATE SET "
        "value = CAST(CAST(value AS INTEGER) + abs(random() % 1099511627776) + 1 AS TEXT)")


def _m007_code_graph(db: sqlite3.Connection) -> None:
    """The code graph (`indexer.graph`): one encoded graph per code file in `graph`, and
    `graph_links`, the keys (imported modules' last parts) each file is found by when
    another file's definitions may be used in it. Files indexed before get theirs when
    they next change (or `ctxd index --force`)."""
    _run_script(
        db,
        """
        CREATE TABLE graph(
            file_id INTEGER PRIMARY KEY REFERENCES files(id),
            repo_id INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        CREATE TABLE graph_links(
            key TEXT NOT NULL,
            file_id INTEGER NOT NULL,
            PRIMARY KEY(key, file_id)
        ) WITHOUT ROWID;
        CREATE INDEX graph_links_file ON graph_links(file_id)
        """,
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _m001_create_core, _m002_chunk_fts, _m003_summaries, _m004_file_roles,
    _m005_root_identity, _m006_text_generation_start, _m007_code_graph]
"""Numbered schema migrations: MIGRATIONS[i] takes the schema from version i to i+1."""


_TOKENS: dict[str, tuple[str, ...]] = {}
_TOKENIZER: sqlite3.Connection | None = None
_TOKENS_LOCK = threading.Lock()


def fts_tokens(word: str) -> tuple[str, ...]:
    """The index terms `chunk_fts` makes of `word` (its tokenizer: porter over unicode61),
    read from a scratch FTS5 table in a private in-memory database, so that no query
    ever writes on an index connection (a write would move its `generation()` and every
    cache keyed on it); cached per word. The keyword postings in memory
    (`search.keyword_index`) are keyed by these terms."""
    global _TOKENIZER
    with _TOKENS_LOCK:
        if word in _TOKENS:
            return _TOKENS[word]
        if _TOKENIZER is None:
            _TOKENIZER = sqlite3.connect(":memory:", check_same_thread=False)
            _TOKENIZER.execute(
                f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{CHUNK_FTS_TOKENIZE}')")
            _TOKENIZER.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        db = _TOKENIZER
        db.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (word,))
        try:
            tokens = tuple(str(r[0]) for r in db.execute("SELECT term FROM v ORDER BY offset"))
        finally:
            db.execute("DELETE FROM t")
        if len(_TOKENS) > 50_000:
            _TOKENS.clear()
        _TOKENS[word] = tokens
        return tokens
