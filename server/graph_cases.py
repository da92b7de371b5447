"""How code connects, as use cases: resolved references, callers, callees, call paths
and impact (`GraphCases`, one method per request record of `server.requests`).

Each checks its arguments once (the symbol, the depth's range, the repositories), names
one definition (`search.graph.naming`: an unknown or ambiguous name is an error that
says what to do) and asks `search.graph.queries`. The CLI, the MCP tools and the daemon
reach them through `Service` like every other use case.
"""

from __future__ import annotations

import posixpath

from ctxd.indexer.chunk.grammars import SYNTAX
from ctxd.indexer.chunk.languages import detect_language, linguist_name
from ctxd.indexer.errors import SymbolNotFound, ValidationError
from ctxd.indexer.graph.specs import SPECS
from ctxd.search.graph import queries
from ctxd.search.graph.models import CallPaths, Calls, GraphDef, Impact, Refs
from ctxd.search.graph.naming import name_definition, parse_symbol
from ctxd.search.lexical.limits import check_query_length
from ctxd.server.repo_names import check_repositories
from ctxd.server.requests import CallPathRequest, CallsRequest, GraphRefsRequest, ImpactRequest
from ctxd.server.resources import Resources

__all__ = ["MAX_LIMIT", "GraphCases", "check_depth"]

MAX_LIMIT = 2000
"""The most usages or edges one answer lists."""


def check_depth(depth: int, field: str = "depth") -> int:
    """`depth` within 1..`queries.MAX_DEPTH`, else a ValidationError naming it."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not (
            1 <= depth <= queries.MAX_DEPTH):
        raise ValidationError(
            f"{field} must be between 1 and {queries.MAX_DEPTH}, not {depth!r}",
            hint=f"Pass --{field} N with N from 1 (direct calls only) to {queries.MAX_DEPTH}.",
            details={"field": field, "value": depth})
    return depth


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}, not {limit!r}",
                              hint=f"Pass --limit N with N from 1 to {MAX_LIMIT}.",
                              details={"field": "limit", "value": limit})
    return limit


class GraphCases:
    """The code graph's use cases over one `Resources`."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    def _definition(self, symbol: str, repositories: list[str] | None,
                    field: str = "symbol") -> GraphDef:
        check_query_length(field, symbol)
        store = self.resources.store()
        check_repositories(store, tuple(repositories or ()), lambda: None)
        try:
            return name_definition(store, symbol, repositories)
        except (ValidationError, SymbolNotFound) as exc:
            exc.details["field"] = field
            if field in ("source", "target"):  # `path A B`: say which of the two it is
                exc.message = f"{field}: {exc.message}"
                exc.args = (exc.message,)
            raise

    def graph_refs(self, request: GraphRefsRequest) -> Refs:
        """The references of one definition, resolved (see `search.graph.queries`).

        Raises:
            SymbolNotFound, AmbiguousSymbol, ValidationError, IndexNotFound.
        """
        d = self._definition(request.symbol, request.repositories)
        return queries.references(self.resources.store(), d,
                                  limit=_check_limit(request.limit))

    def calls(self, request: CallsRequest) -> Calls:
        """Callers or callees of one definition, as a tree to `request.depth`."""
        if request.direction not in ("callers", "callees"):
            raise ValidationError(f"direction must be callers or callees, not "
                                  f"{request.direction!r}",
                                  details={"field": "direction", "value": request.direction})
        depth = check_depth(request.depth)
        limit = _check_limit(request.limit)
        d = self._definition(request.symbol, request.repositories)
        ask = queries.callers if request.direction == "callers" else queries.callees
        return ask(self.resources.store(), d, depth=depth, limit=limit)

    def call_path(self, request: CallPathRequest) -> CallPaths:
        """The shortest call chains from `source` to `target` (at most `depth` calls)."""
        depth = check_depth(request.depth)
        source = self._definition(request.source, request.repositories, "source")
        target = self._definition(request.target, request.repositories, "target")
        if source.repository != target.repository:
            raise ValidationError(
                f"{request.source!r} and {request.target!r} are in different repositories "
                f"({source.repository}, {target.repository})",
                hint="Call paths stay within one repository.",
                details={"field": "target", "value": request.target})
        return queries.call_paths(self.resources.store(), source, target, max_depth=depth,
                                  limit=_check_limit(request.limit))

    def impact(self, request: ImpactRequest) -> Impact:
        """What depends on a definition, or on every top-level definition of a file."""
        depth = check_depth(request.depth)
        limit = _check_limit(request.limit)
        store = self.resources.store()
        subject = request.subject.strip()
        defs = self._file_definitions(subject, request.repositories)
        if defs is None:
            defs = [self._definition(subject, request.repositories, "subject")]
            return queries.impact(store, defs, subject, depth=depth, limit=limit)
        return queries.impact(store, defs, subject, depth=depth, limit=limit,
                              file=defs[0].path)

    def _file_definitions(self, subject: str, repositories: list[str] | None
                          ) -> list[GraphDef] | None:
        """The top-level definitions of the file `subject` names, and those inside its
        top-level modules and namespaces (Ruby's `module Sinatra`, a TS namespace) or in a
        table that is no definition (Lua's `local M = {}`), where a file's code usually
        lives (None: not a file)."""
        path = subject.removeprefix("./")
        if _is_place(path):
            return None  # PATH:LINE of one definition
        store = self.resources.store()
        check_repositories(store, tuple(repositories or ()), lambda: None)
        indexed = any(store.file_id(r, path) is not None
                      for r in repositories or store.repo_names())
        if not indexed and "/" not in path and "." not in path:
            return None  # a name (`Makefile` or `LICENSE` only when indexed as a file)
        code = path.endswith(tuple(f".{e}" for e in _CODE_EXTENSIONS)) or (
            detect_language(path) in SYNTAX)  # C#, PHP, ...
        if not indexed and not code and ("/" not in path or path.endswith(("/", "\\"))):
            return None  # a qualified name (`pkg.mod.f`), or a folder
        if not indexed:
            raise SymbolNotFound(
                f"no indexed file at {path}" + (f" in {', '.join(repositories)}"
                                                 if repositories else ""),
                hint=f"Give the path from the repository root, or from the current folder "
                     f"inside it (`ctxd files '**/{posixpath.basename(path)}'` lists the "
                     "indexed ones); `ctxd impact` takes a code file or a definition.",
                details={"field": "subject", "value": subject, "reason": "not_indexed"})
        scope = f" AND r.name IN ({','.join('?' * len(repositories))})" if repositories else ""
        rows = sorted(store.symbol_rows("s.path = ?" + scope, [path, *(repositories or [])]),
                      key=lambda r: (str(r[5] or "").count(".") + bool(r[5]), int(r[4])))
        outer: set[tuple[str, str]] = set()  # (repository, qualified name) of the namespaces
        named = {(str(r[2]), f"{r[5]}.{r[0]}" if r[5] else str(r[0])) for r in rows}
        defs: list[GraphDef] = []
        for r in rows:
            if str(r[6]) not in SPECS and str(r[6]) not in SYNTAX:
                continue
            container = str(r[5]) if r[5] else ""
            if container and (str(r[2]), container) not in outer and (
                    str(r[2]), container) in named:
                continue  # inside a class or function: reached through it (a container
                # that is no definition, a Lua module's table `M`, is the top level)
            qualified = f"{container}.{r[0]}" if container else str(r[0])
            if str(r[1]) in _NAMESPACE_KINDS:
                outer.add((str(r[2]), qualified))
            defs.append(GraphDef(str(r[0]), qualified, str(r[1]), str(r[2]), str(r[3]),
                                 int(r[4]), int(r[7])))
        if not defs:
            roles = {role for (repo, _p), role in store.file_roles([path]).items()
                     if not repositories or repo in repositories}
            if roles - _PARSED_ROLES or (
                    not code and not any(str(r[6]) in SPECS for r in rows)):
                raise _not_read(subject, path, sorted(roles - _PARSED_ROLES))
            raise SymbolNotFound(  # (a script with no extension is code)
                f"no definitions in {path}: impact follows the uses of a file's functions, "
                "classes and methods, and it has none",
                hint="`ctxd refs NAME` follows a name it uses; `ctxd search` finds what uses "
                     "it by meaning.",
                details={"field": "subject", "value": subject, "reason": "no_definitions",
                         "basename": posixpath.basename(path)})
        return defs[:200]


_NAMESPACE_KINDS = frozenset({"module", "namespace", "package"})
"""Definitions that only hold others (a file's code lives inside them): `impact FILE`
follows what is inside them as the file's own top level."""


_PARSED_ROLES = frozenset({"", "generated", "long-lines"})
"""File roles (`indexer.walk.textclass.Role`) whose code the graph still reads."""
_ROLE_WORDS = {"lockfile": "a lockfile", "data": "a data file", "minified": "minified",
               "built": "build output", "vendored": "vendored code",
               "changelog": "a changelog", "translation": "a translated page",
               "diagram": "a diagram", "certificate": "a certificate"}


def _not_read(subject: str, path: str, roles: list[str]) -> ValidationError:
    """`impact` of an indexed file the code graph does not read: one message for every
    kind (a lockfile, data, prose, a language it does not read, a file kept greppable
    only), saying what the file is and what to do instead."""
    language = detect_language(path)
    what = ", ".join(_ROLE_WORDS.get(r, r) for r in roles)
    name = linguist_name(language) if language != "text" else ""
    what = f"{what} ({name})" if what and name else what or name or "not code"
    kept = bool({"minified", "built", "vendored"} & set(roles)) and (
        language in SPECS or language in SYNTAX)
    return ValidationError(
        f"{path} is {what}, which the code graph does not read: `impact` follows code "
        "files and definitions",
        hint=f"`ctxd search '{posixpath.basename(path)}' --mode lexical` finds what mentions "
             "it; `ctxd refs NAME --by-name` (MCP: `by_name: true`) lists the lines that "
             "mention one of its names"
             + (f"; to read it as code, add it to `walk.embed_allow` in the config (e.g. "
                f"[\"{path}\"]) and index again." if kept else "."),
        details={"field": "subject", "value": subject, "reason": "not_code",
                 "language": language, "roles": roles})


_CODE_EXTENSIONS = ("py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go",
                    "rs", "java", "c", "h", "cc", "cpp", "hpp", "hh", "rb", "sh")


def _is_place(subject: str) -> bool:
    """Whether `subject` is `PATH:LINE` (or `PATH:LINE:COLUMN`) of a definition."""
    try:
        return isinstance(parse_symbol(subject), tuple)
    except ValidationError:
        return False
