"""Queries -> ranked hits: semantic, lexical (embedded | Zoekt), symbols, fusion.

Reads the store; never writes it."""
