"""The command line: `ctxd` commands, text and JSON rendering."""
