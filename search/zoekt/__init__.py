"""The Zoekt HTTP JSON client (`client`), its answer decoding (`decode`) and query
building (`query`)."""
