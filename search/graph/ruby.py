"""Ruby constants across files: what `require` brings, and modules reopened elsewhere.

Ruby has no imports that name what they bind: `require 'sinatra/base'` loads a file whose
top-level constants (and modules' constants) every later file sees. `RubyLookups` answers
a constant a file does not define where it is used: inside a module reopened here
(`module Sinatra ... Base ... end`) the module's constant of a required file
(`Sinatra::Base`), else a top-level constant of a required file. Required files are
followed transitively (at most `MAX_REQUIRED`), by `require_relative`'s path, the
repository's root or `lib/`, else the nearest folder above the requiring file (or its
`lib/`), as a test runner's or a gem's load path puts them (`spec/spec_helper.rb`).
`Resolver` inherits it.

Invariants: the nearest answer first (the file itself, then required files in order);
memoised per workspace (`ws.memo`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ctxd.indexer.graph import Import
from ctxd.search.graph.facts import FactsBase, FileFacts, Target

__all__ = ["MAX_REQUIRED", "RubyLookups"]

MAX_REQUIRED = 50
"""The most files one Ruby file's `require`s are followed to."""


class RubyLookups(FactsBase):
    """The Ruby lookups of a resolver (over `FactsBase`'s per-file facts)."""

    def ruby_constant(self, path: str, name: str, scope: int) -> Target | None:
        """A Ruby constant the file does not define where it is used: `Base` inside a
        `module Sinatra` reopened here is `Sinatra::Base` of a required file; else a
        top-level one of a required file."""
        facts = self.facts(path)
        if facts is None:
            return None
        defs, spaces, s = facts.graph.defs, [], scope
        while s >= 0:
            if defs[s].kind in ("module", "class"):
                spaces.append(defs[s].qualname + ".")
            s = defs[s].parent
        required = self.ruby_required(path)
        for space in (*spaces, ""):
            for f in (path, *required) if space else required:
                ff = self.facts(f)
                if ff is not None and (k := ff.qualnames.get(space + name)) is not None:
                    return Target("def", f, k)
        return None

    def ruby_required(self, path: str) -> list[str]:
        """The files a Ruby file requires, and those they require (nearest first, at most
        `MAX_REQUIRED`): their top-level constants are the file's too."""
        def requires(here: str, facts: FileFacts) -> Iterator[str]:
            for imp in facts.graph.imports:
                yield from self.ws.layout.resolve(here, imp, "ruby") or self._load_path(here, imp)

        return self.reached(path, "ruby_required", MAX_REQUIRED, requires)

    def _load_path(self, path: str, imp: Import) -> list[str]:
        """A Ruby `require 'spec_helper'` the repository's root and `lib/` do not hold: the
        nearest folder above the file (or its `lib/`) that has it, as a load path set by
        the test runner (`spec/`) or a gem's own `lib/` would."""
        if imp.level:
            return []
        name = imp.module if imp.module.endswith(".rb") else imp.module + ".rb"
        folder = posixpath.dirname(path)
        while folder:
            for got in (f"{folder}/{name}", f"{folder}/lib/{name}"):
                if got in self.ws.layout.paths:
                    return [got]
            folder = posixpath.dirname(folder)
        return []
