"""The file watcher: events -> coalesced batches -> incremental re-index."""
