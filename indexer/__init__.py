"""Files -> checkpoints: walk, chunk, embed, store. Imports nothing from `search` or `server`."""
