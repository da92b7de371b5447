"""The PostgreSQL store: the index in a database a team shares (pgvector, full text, pg_trgm),
as `store.PgStore`, composed like the SQLite store of one module per concern (`connection`
with its `pool` and `schema` migrations; `repos`; `files`; `pending`; `vectors`, pgvector
behind the `VectorRows` seam with an HNSW index; `keywords`, BM25 over full text;
`coverage`), its `dialect` for the search layer's SQL, the per-repository advisory write
`locks`, and how driver `errors` become ctxd's. psycopg is imported only here, and only
when a store URL is configured."""
