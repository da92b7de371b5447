"""Files -> checkpoints: syntax-aware chunking sized in model tokens, languages, symbols
and file summaries (`chunker`, `syntax`, `tokens`, `summary`, ...)."""
