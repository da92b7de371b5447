"""The PostgreSQL store's schema: numbered migrations under an advisory lock.

`migrate(conn, url)` reads the schema version (`meta.schema_version`); when it is behind
`len(MIGRATIONS)` it takes the advisory lock `MIGRATION_LOCK`, then, in a new transaction,
reads the version again (another process may have migrated meanwhile) and runs the
missing migrations in that one transaction, so that several processes opening a new store at once
migrate it exactly once, and a failed migration leaves the old schema whole (PostgreSQL's
DDL is transactional). A current schema costs one read and takes no lock, so a read-only
role opens a store that was created by another role.

The tables mirror the SQLite store's (`indexer.store.sqlite.schema`), so the search layer's
portable SQL reads both: `repos`, `files` (plus `host`: the machine that last indexed a
repository), `file_text` (`file_id`, `content`, with a `pg_trgm` GIN index for the lexical
engine), `checkpoints` (plus `words`, the path, symbol and text as a weighted `tsvector` of
the `ctxd_words` configuration, porter-stemmed like FTS5's `porter unicode61`, with a GIN
index, `words_len`, its token count, and `terms` / `freqs`, each lexeme's hash and
column-weighted frequency, for BM25), `embeddings` (`id`, `hash`; `embedding` is added
with its HNSW index by `ensure_model` once the dimension is known), `symbols`,
`summaries` (`vector` as float32 bytes), `keyword_stats` (checkpoints and tokens per
repository: BM25's N and average length) and `keyword_df` (per repository and lexeme, the
checkpoints holding it: BM25's document frequency without counting rows at query time),
both kept per repository so that writers of different repositories never wait for each
other, and `meta`. Ids come from sequences and
are never reused; `ctxd_text_generation` is the text generation (a sequence: no row that
every writer updates). Text columns that are sorted on use the "C" collation, so rows sort
as SQLite's BINARY does.

Invariants: migrations are append-only; each is a list of statements run in the caller's
transaction; `schema_version` counts how many ran.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ctxd.indexer.errors import StorageError
from ctxd.indexer.store.location import redact_url
from ctxd.indexer.store.pg.errors import pg_errors

MIGRATION_LOCK = 0x63747864_0001
"""The advisory lock (bigint key) migrations run under."""

TEXT_CONFIG = "ctxd_words"
"""The text search configuration of `checkpoints.words`."""

_M001 = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE TABLE IF NOT EXISTS meta(key text PRIMARY KEY, value text NOT NULL)",
    "CREATE SEQUENCE ctxd_text_generation",
    "CREATE TEXT SEARCH DICTIONARY ctxd_porter (TEMPLATE = snowball, Language = porter)",
    f"CREATE TEXT SEARCH CONFIGURATION {TEXT_CONFIG} (COPY = simple)",
    f"ALTER TEXT SEARCH CONFIGURATION {TEXT_CONFIG} ALTER MAPPING FOR asciiword, word, "
    "numword, asciihword, hword, hword_part, hword_asciipart, hword_numpart WITH ctxd_porter",
    """CREATE TABLE repos(
        id bigserial PRIMARY KEY,
        name text COLLATE "C" NOT NULL UNIQUE,
        root text COLLATE "C" NOT NULL UNIQUE,
        options text NOT NULL DEFAULT '{}',
        created_at text NOT NULL,
        indexed_at text,
        index_started_at text,
        host text NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE files(
        id bigserial PRIMARY KEY,
        repo_id bigint NOT NULL REFERENCES repos(id),
        path text COLLATE "C" NOT NULL,
        size bigint NOT NULL,
        mtime_ns bigint NOT NULL,
        hash text NOT NULL,
        language text NOT NULL,
        lines integer NOT NULL,
        indexed_at text NOT NULL,
        role text NOT NULL DEFAULT '',
        UNIQUE(repo_id, path)
    )""",
    "CREATE INDEX files_path ON files(path)",
    "CREATE INDEX files_role ON files(role) WHERE role <> ''",
    """CREATE TABLE file_text(
        file_id bigint PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
        content text NOT NULL
    )""",
    "CREATE INDEX file_text_trgm ON file_text USING gin (content gin_trgm_ops)",
    # A checkpoint's words again, as two aligned arrays (a lexeme's hashtext, its
    # column-weighted frequency), so that BM25 reads a term's frequency with one
    # array_position instead of unnesting the whole tsvector of every row it scores.
    """CREATE FUNCTION ctxd_terms(tsvector) RETURNS integer[] LANGUAGE sql IMMUTABLE
        PARALLEL SAFE AS $$ SELECT coalesce(array_agg(hashtext(lexeme) ORDER BY lexeme),
        '{}') FROM unnest($1) $$""",
    """CREATE FUNCTION ctxd_freqs(tsvector) RETURNS real[] LANGUAGE sql IMMUTABLE
        PARALLEL SAFE AS $$ SELECT coalesce(array_agg((SELECT sum(CASE w WHEN 'A' THEN 3
        WHEN 'B' THEN 4 WHEN 'D' THEN 1 ELSE 0 END) FROM unnest(weights) w)::real
        ORDER BY lexeme), '{}') FROM unnest($1) $$""",
    "CREATE SEQUENCE checkpoint_ids",
    """CREATE TABLE checkpoints(
        id bigint PRIMARY KEY DEFAULT nextval('checkpoint_ids'),
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        repo_id bigint NOT NULL,
        path text COLLATE "C" NOT NULL,
        language text NOT NULL,
        start_line integer NOT NULL,
        end_line integer NOT NULL,
        symbol text,
        symbol_kind text,
        container text,
        text text NOT NULL,
        hash text NOT NULL,
        words tsvector NOT NULL,
        words_len integer NOT NULL,
        terms integer[] NOT NULL,
        freqs real[] NOT NULL
    )""",
    "CREATE INDEX checkpoints_file ON checkpoints(file_id)",
    "CREATE INDEX checkpoints_hash ON checkpoints(hash)",
    "CREATE INDEX checkpoints_repo ON checkpoints(repo_id)",
    "CREATE INDEX checkpoints_path ON checkpoints(path)",
    "CREATE INDEX checkpoints_words ON checkpoints USING gin (words)",
    "CREATE TABLE embeddings(id bigserial PRIMARY KEY, hash text NOT NULL UNIQUE)",
    """CREATE TABLE symbols(
        id bigserial PRIMARY KEY,
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        repo_id bigint NOT NULL,
        path text COLLATE "C" NOT NULL,
        language text NOT NULL,
        name text COLLATE "C" NOT NULL,
        kind text NOT NULL,
        container text,
        line integer NOT NULL,
        end_line integer NOT NULL
    )""",
    "CREATE INDEX symbols_name ON symbols(lower(name))",
    "CREATE INDEX symbols_file ON symbols(file_id)",
    "CREATE INDEX symbols_repo ON symbols(repo_id)",
    """CREATE TABLE summaries(
        file_id bigint PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
        repo_id bigint NOT NULL,
        path text COLLATE "C" NOT NULL,
        text text NOT NULL,
        hash text NOT NULL,
        vector bytea
    )""",
    "CREATE INDEX summaries_hash ON summaries(hash)",
    "CREATE INDEX summaries_path ON summaries(path)",
    "CREATE INDEX summaries_repo ON summaries(repo_id)",
    """CREATE TABLE keyword_stats(
        repo_id bigint PRIMARY KEY,
        rows bigint NOT NULL DEFAULT 0,
        tokens bigint NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE keyword_df(
        lexeme text COLLATE "C" NOT NULL,
        repo_id bigint NOT NULL,
        df bigint NOT NULL,
        PRIMARY KEY (lexeme, repo_id)
    )""",
]

_M002 = [
    # The identity ("<st_dev>:<st_ino>") of a repository's root folder when it was last
    # indexed, on the machine that indexed it (`indexer.walk.rootpin`).
    "ALTER TABLE repos ADD COLUMN root_id text NOT NULL DEFAULT ''",
]

_M003 = [
    # The text generation moves up by a random 40-bit step: what a process keeps from the
    # text is keyed by (store URL, text generation), and a database dropped and made again
    # under the same URL must not count the same generations as the one it replaced.
    "SELECT setval('ctxd_text_generation', (SELECT CASE WHEN is_called THEN last_value "
    "ELSE 0 END FROM ctxd_text_generation) + 1 + floor(random() * 1099511627776)::bigint)",
]

_M004 = [
    # The code graph (`indexer.graph`): one encoded graph per code file, and the keys
    # (imported modules' last parts) each file is found by as an importer.
    """CREATE TABLE graph(
        file_id bigint PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
        repo_id bigint NOT NULL,
        data bytea NOT NULL
    )""",
    """CREATE TABLE graph_links(
        key text COLLATE "C" NOT NULL,
        file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        PRIMARY KEY (key, file_id)
    )""",
    "CREATE INDEX graph_links_file ON graph_links(file_id)",
]

MIGRATIONS: list[list[str]] = [_M001, _M002, _M003, _M004]
"""Numbered schema migrations: MIGRATIONS[i] takes the schema from version i to i+1."""

TABLES = ("meta", "repos", "files", "file_text", "checkpoints", "embeddings", "symbols",
          "summaries", "keyword_stats", "keyword_df", "graph", "graph_links")
"""ctxd's tables (their sizes make the store's size)."""


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """How many migrations ran (0 for an empty database)."""
    if conn.execute("SELECT to_regclass('meta')").fetchone() == (None,):
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection[Any], url: str) -> None:
    """Bring the schema up to date (see the module docstring); `conn` is in autocommit.

    Raises:
        StorageError: the store is newer than this ctxd, or must change and this role may
            not change it.
        BackendUnavailable: the server went away.
    """
    with pg_errors(url):
        version = schema_version(conn)
        if version > len(MIGRATIONS):
            raise StorageError(
                f"the team store {redact_url(url)} has schema version {version}, newer than "
                f"this ctxd knows ({len(MIGRATIONS)})",
                hint="Upgrade ctxd on this machine to the version the store was written with.",
                details={"kind": "schema_newer", "version": version})
        if version == len(MIGRATIONS):
            return
        # The lock first, then a transaction of its own: one begun before the lock was
        # granted would still see the catalog as it was (another process's tables unknown).
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            with conn.transaction():
                version = schema_version(conn)
                for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
                    for statement in statements:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO meta(key, value) VALUES ('schema_version', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (str(number),))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
