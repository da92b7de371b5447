"""The index on disk: the one SQLite file, as `store.Store`, composed of one module per
concern (`connection`, the only module that opens it, with its `schema` migrations;
`repos`; `files`; `pending`; `vectors`, the sqlite-vec rows behind the `vector_rows` seam
where another engine plugs in; `coverage`; the row `records`), the writer lock and the
private index home (`private`), and storage failures (`storage_errors`)."""
