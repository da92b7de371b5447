"""The ctxd daemon: one warm process per index home, reached over a Unix socket."""
