"""The SQLite store: the index in one file in the index home (WAL, sqlite-vec, FTS5), as
`store.Store`, composed of one module per concern, as the PostgreSQL store is in
`indexer.store.pg`."""
