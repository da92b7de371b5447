"""The index on disk: the one SQLite file (`store`, the only module that opens it; its
`schema` migrations), the writer lock and the private index home."""
