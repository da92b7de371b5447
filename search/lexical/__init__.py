"""The embedded lexical engine: Zoekt's query language (`query`) run over the trigram index
(`engine`: plan, SQL candidates, regex verification, ranking)."""
