"""How a language is parsed: its tree-sitter grammar and the node types that make
definitions in it.

`SYNTAX` maps a language id (`indexer.chunk.languages`) to its `SyntaxTable`, the node-type
tables that `indexer.chunk.syntax` and `extractors` use to find definitions (and the graph
and symbol search to name them); `load_grammar(lang)` returns a `tree_sitter.Language` or
None. Grammars load offline only, in this order: the per-language wheel
(`tree_sitter_python`, ...), then a grammar that `tree_sitter_language_pack` already has
in its local cache. The language pack 1.x ships no grammars and downloads them on first
use; this module never asks it to (it only lists `downloaded_languages()`), so nothing is
ever fetched at run time. A language without a loadable grammar is chunked by line
windows. `parsed_languages()` is what the pipeline records per repository, so that a later
ctxd that parses more languages, or one otherwise (`PARSE_REVISIONS`), chunks those files
again (`indexer.redecide`).

Pure, apart from the cached grammar imports (one lock, each grammar loaded once).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import tree_sitter

from ctxd.indexer.chunk.languages import LANGUAGES, LanguageInfo

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SyntaxTable:
    """Node types that make definitions in one tree-sitter grammar.

    `defs` maps a node type to the symbol kind it defines. Special node types handled
    in `indexer.chunk.extractors`: `variable_declarator`/`field_definition` (JS/TS: only when the
    value is a function), `type_spec`/`const_spec`/`var_spec` (Go), `type_definition`
    (C/C++), struct/enum specifiers (only with a body).
    """

    defs: Mapping[str, str]
    wrappers: frozenset[str] = frozenset()
    """Parents that belong to a definition's extent (decorators, `export`, `template<>`)."""
    attached: frozenset[str] = frozenset()
    """Siblings directly above a definition that belong to it (comments, attributes)."""
    method_containers: frozenset[str] = frozenset({"class", "struct", "interface", "trait", "impl"})
    """Kinds whose `function` children are reported as `method`."""


_PY_COMMENTS = frozenset({"comment"})
_C_LIKE_COMMENTS = frozenset({"comment"})
_JS_DEFS: dict[str, str] = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "variable_declarator": "function",
    "field_definition": "method",
    "assignment_expression": "function",
}
_TS_DEFS: dict[str, str] = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "abstract_method_signature": "method",
    "public_field_definition": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "module",
}
del _TS_DEFS["field_definition"]
_JS_WRAPPERS = frozenset({"export_statement"})
_TS_WRAPPERS = frozenset({"export_statement", "ambient_declaration", "expression_statement"})
_JS_ATTACHED = frozenset({"comment", "decorator"})
_C_DEFS: dict[str, str] = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
}

SYNTAX: dict[str, SyntaxTable] = {
    "python": SyntaxTable(
        defs={
            "function_definition": "function",
            "class_definition": "class",
            "type_alias_statement": "type",
        },
        wrappers=frozenset({"decorated_definition"}),
        attached=_PY_COMMENTS,
        method_containers=frozenset({"class"}),
    ),
    "javascript": SyntaxTable(
        defs=_JS_DEFS,
        wrappers=_JS_WRAPPERS,
        attached=_JS_ATTACHED,
        method_containers=frozenset({"class"}),
    ),
    "typescript": SyntaxTable(
        defs=_TS_DEFS,
        wrappers=_TS_WRAPPERS,
        attached=_JS_ATTACHED,
        method_containers=frozenset({"class", "interface"}),
    ),
    "tsx": SyntaxTable(
        defs=_TS_DEFS,
        wrappers=_TS_WRAPPERS,
        attached=_JS_ATTACHED,
        method_containers=frozenset({"class", "interface"}),
    ),
    "go": SyntaxTable(
        defs={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
            "type_alias": "type",
            "const_spec": "constant",
            "var_spec": "variable",
        },
        attached=_C_LIKE_COMMENTS,
        method_containers=frozenset(),
    ),
    "rust": SyntaxTable(
        defs={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "union_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "type_item": "type",
            "const_item": "constant",
            "static_item": "constant",
        },
        attached=frozenset({"line_comment", "block_comment", "attribute_item"}),
        method_containers=frozenset({"trait", "impl"}),
    ),
    "java": SyntaxTable(
        defs={
            "class_declaration": "class",
            "record_declaration": "class",
            "interface_declaration": "interface",
            "annotation_type_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "compact_constructor_declaration": "constructor",
        },
        attached=frozenset({"line_comment", "block_comment"}),
        method_containers=frozenset({"class", "interface", "enum"}),
    ),
    "c": SyntaxTable(
        defs=_C_DEFS,
        attached=_C_LIKE_COMMENTS,
        method_containers=frozenset(),
    ),
    "cpp": SyntaxTable(
        defs={
            **_C_DEFS,
            "class_specifier": "class",
            "namespace_definition": "namespace",
        },
        wrappers=frozenset({"template_declaration"}),
        attached=_C_LIKE_COMMENTS,
        method_containers=frozenset({"class", "struct"}),
    ),
    "ruby": SyntaxTable(
        defs={
            "class": "class",
            "module": "module",
            "method": "function",
            "singleton_method": "method",
        },
        attached=frozenset({"comment"}),
        method_containers=frozenset({"class", "module"}),
    ),
    "shell": SyntaxTable(
        defs={"function_definition": "function"},
        attached=frozenset({"comment"}),
        method_containers=frozenset(),
    ),
    # The rules for the tables below: `indexer.chunk.extractors_more`.
    "csharp": SyntaxTable(
        defs={
            "class_declaration": "class",
            "record_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "property_declaration": "property",
            "variable_declarator": "constant",
            "delegate_declaration": "type",
        },
        attached=frozenset({"comment"}),
        method_containers=frozenset({"class", "struct", "interface"}),
    ),
    "php": SyntaxTable(
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "function_definition": "function",
            "method_declaration": "method",
            "const_element": "constant",
        },
        attached=frozenset({"comment"}),
        method_containers=frozenset({"class", "interface", "trait", "enum"}),
    ),
    "kotlin": SyntaxTable(
        defs={
            "class_declaration": "class",
            "object_declaration": "class",
            "companion_object": "class",
            "function_declaration": "function",
            "secondary_constructor": "constructor",
            "property_declaration": "property",
            "type_alias": "type",
        },
        attached=frozenset({"line_comment", "block_comment"}),
        method_containers=frozenset({"class", "interface", "enum"}),
    ),
    "swift": SyntaxTable(
        defs={
            "class_declaration": "class",
            "protocol_declaration": "interface",
            "function_declaration": "function",
            "protocol_function_declaration": "method",
            "init_declaration": "constructor",
            "property_declaration": "property",
            "protocol_property_declaration": "property",
            "typealias_declaration": "type",
        },
        attached=frozenset({"comment", "multiline_comment"}),
        method_containers=frozenset({"class", "struct", "enum", "interface", "extension"}),
    ),
    "scala": SyntaxTable(
        defs={
            "class_definition": "class",
            "object_definition": "class",
            "trait_definition": "trait",
            "enum_definition": "enum",
            "function_definition": "function",
            "function_declaration": "function",
            "val_definition": "constant",
            "var_definition": "variable",
            "type_definition": "type",
        },
        attached=frozenset({"comment", "block_comment"}),
        method_containers=frozenset({"class", "trait", "enum"}),
    ),
    "lua": SyntaxTable(
        defs={"function_declaration": "function"},
        attached=frozenset({"comment"}),
        method_containers=frozenset(),
    ),
    "elixir": SyntaxTable(
        defs={"call": "function"},
        attached=frozenset({"comment", "unary_operator"}),  # `@doc`, `@spec` above a `def`
        method_containers=frozenset(),
    ),
}


_grammar_lock = threading.Lock()
_grammars: dict[str, tree_sitter.Language | None] = {}
_grammar_sources: dict[str, str] = {}


def _from_wheel(info: LanguageInfo) -> tree_sitter.Language | None:
    if info.grammar is None:
        return None
    module_name, func = info.grammar
    try:
        module = importlib.import_module(module_name)
        return tree_sitter.Language(getattr(module, func)())
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        logger.debug("grammar wheel %s unavailable: %s", module_name, exc)
        return None


def _from_language_pack(info: LanguageInfo) -> tree_sitter.Language | None:
    """A grammar the language pack already has on disk; never triggers its download."""
    if info.pack_name is None:
        return None
    try:
        import tree_sitter_language_pack as pack
    except ImportError:
        return None
    try:
        if info.pack_name not in pack.downloaded_languages():
            return None
        language: tree_sitter.Language = pack.get_language(info.pack_name)
        return language
    except (pack.Error, OSError, ValueError) as exc:
        logger.debug("language pack grammar %s unavailable: %s", info.pack_name, exc)
        return None


def load_grammar(language: str) -> tree_sitter.Language | None:
    """The tree-sitter grammar for a language id, or None (cached; offline only)."""
    if language in _grammars:
        return _grammars[language]
    with _grammar_lock:
        if language in _grammars:
            return _grammars[language]
        info = LANGUAGES.get(language)
        grammar: tree_sitter.Language | None = None
        if info is not None and language in SYNTAX:
            grammar = _from_wheel(info)
            source = "wheel"
            if grammar is None:
                grammar = _from_language_pack(info)
                source = "tree-sitter-language-pack cache"
            if grammar is not None:
                _grammar_sources[language] = source
        _grammars[language] = grammar
        return grammar


PARSED_BEFORE_RECORD = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust",
                                  "java", "c", "cpp", "ruby", "shell"})
"""The languages ctxd parsed by tree-sitter before an index recorded which it parses
(`parsed_languages`): what an index without that record was chunked with."""


PARSE_REVISIONS: dict[str, int] = {"c": 2, "cpp": 2}
"""Languages whose files are now parsed otherwise than at first, and how many times that
changed (2: C and C++ files whose `#ifdef` branches broke the parse are read through their
first branches, `indexer.chunk.conditionals`): recorded as `c@2`, so that an index made
before re-chunks those files once."""


def parsed_languages() -> list[str]:
    """The languages whose files are cut by their syntax here (a table and a grammar that
    loads), sorted, each with its `PARSE_REVISIONS` suffix (`c@2`): what the pipeline
    records per repository, so that a later ctxd that parses more of them, or parses one
    of them otherwise, re-chunks those files (`indexer.pipeline`)."""
    return sorted(f"{lang}@{PARSE_REVISIONS[lang]}" if lang in PARSE_REVISIONS else lang
                  for lang in SYNTAX if load_grammar(lang) is not None)


def grammar_status() -> dict[str, str]:
    """For each language with a syntax table: where its grammar loads from, or "missing"."""
    out: dict[str, str] = {}
    for language in SYNTAX:
        grammar = load_grammar(language)
        out[language] = _grammar_sources.get(language, "missing") if grammar else "missing"
    return out
