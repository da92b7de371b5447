"""Per-language tree-sitter node types the graph extractor reads (`indexer.graph.extract`).

A `GraphSpec` names, for one grammar: the identifier node types; the subtrees that are
never code (comments, strings, with the node types inside them that are code again:
f-string interpolations, template substitutions); calls (node type -> the field holding
the callee); member accesses (node type -> object field, name field); where definitions
keep their names; parameters; bindings; class bases. Node types a grammar lacks are
simply never met. Pure data.
"""

from __future__ import annotations

from ctxd.indexer.graph.specs_base import GraphSpec
from ctxd.indexer.graph.specs_more import MORE_SPECS

__all__ = ["SPECS", "GraphSpec"]


_PY = GraphSpec(
    names=frozenset({"identifier"}),
    skip=frozenset({"comment", "string", "concatenated_string"}),
    code_inside=frozenset({"interpolation", "string"}),
    calls={"call": "function"},
    members={"attribute": ("object", "attribute")},
    def_names={"function_definition": "name", "class_definition": "name"},
    params=frozenset({"parameters", "lambda_parameters", "list_splat_pattern",
                      "dictionary_splat_pattern"}),
    param_nodes={"typed_parameter": ("", "type"), "default_parameter": ("name", ""),
                 "typed_default_parameter": ("name", "type")},
    binds={"assignment": ("left", "right"), "named_expression": ("name", "value")},
    bind_targets={"for_statement": "left", "for_in_clause": "left",
                  "as_pattern_target": "", "global_statement": "", "nonlocal_statement": ""},
    bases={"class_definition": "superclasses"},
    not_refs={"keyword_argument": "name"},
    self_names=frozenset({"self", "cls"}),
)

_JS_NAMES = frozenset({"identifier", "property_identifier", "shorthand_property_identifier",
                       "type_identifier", "shorthand_property_identifier_pattern",
                       "private_property_identifier"})
_JS_SKIP = frozenset({"comment", "string", "template_string", "regex", "html_comment"})
_JS_DEFS = {
    "function_declaration": "name", "generator_function_declaration": "name",
    "class_declaration": "name", "abstract_class_declaration": "name", "class": "name",
    "method_definition": "name", "interface_declaration": "name",
    "type_alias_declaration": "name", "enum_declaration": "name",
    "abstract_method_signature": "name", "method_signature": "name",
    "function_signature": "name", "public_field_definition": "name",
    "field_definition": "property", "property_signature": "name", "function_expression": "name",
}

_JS = GraphSpec(
    names=_JS_NAMES,
    skip=_JS_SKIP,
    code_inside=frozenset({"template_substitution"}),
    calls={"call_expression": "function", "new_expression": "constructor"},
    members={"member_expression": ("object", "property")},
    def_names=_JS_DEFS,
    params=frozenset({"formal_parameters"}),
    param_nodes={"required_parameter": ("pattern", "type"),
                 "optional_parameter": ("pattern", "type"),
                 "assignment_pattern": ("left", ""), "rest_pattern": ("", "")},
    binds={"variable_declarator": ("name", "value"), "assignment_expression": ("left", "right")},
    bind_targets={"for_in_statement": "left", "catch_clause": "parameter"},
    bases={"extends_clause": "value", "implements_clause": "", "class_heritage": "",
           "extends_type_clause": "type"},
    not_refs={"pair": "key", "pair_pattern": "key", "jsx_attribute": "",
              "labeled_statement": "label", "break_statement": "label",
              "continue_statement": "label"},
    self_names=frozenset({"this"}),
)

_GO = GraphSpec(
    names=frozenset({"identifier", "field_identifier", "type_identifier",
                     "package_identifier"}),
    skip=frozenset({"comment", "interpreted_string_literal", "raw_string_literal",
                    "rune_literal", "import_declaration"}),
    calls={"call_expression": "function"},
    members={"selector_expression": ("operand", "field"), "qualified_type": ("package", "name")},
    def_names={"function_declaration": "name", "method_declaration": "name",
               "type_spec": "name", "type_alias": "name", "method_elem": "name",
               "method_spec": "name"},
    param_nodes={"parameter_declaration": ("name", "type"),
                 "variadic_parameter_declaration": ("name", "type")},
    binds={"short_var_declaration": ("left", "right"), "var_spec": ("name", "value"),
           "const_spec": ("name", "value"), "assignment_statement": ("left", "right")},
    bind_targets={"range_clause": "left"},
    not_refs={"keyed_element": "", "labeled_statement": "label"},
    self_names=frozenset(),
)

_RUST = GraphSpec(
    names=frozenset({"identifier", "field_identifier", "type_identifier"}),
    skip=frozenset({"line_comment", "block_comment", "string_literal", "raw_string_literal",
                    "char_literal", "use_declaration", "attribute_item",
                    "inner_attribute_item"}),
    calls={"call_expression": "function", "macro_invocation": "macro"},
    members={"field_expression": ("value", "field"), "scoped_identifier": ("path", "name"),
             "scoped_type_identifier": ("path", "name")},
    def_names={"function_item": "name", "function_signature_item": "name",
               "struct_item": "name", "enum_item": "name", "trait_item": "name",
               "mod_item": "name", "type_item": "name", "const_item": "name",
               "static_item": "name", "union_item": "name", "enum_variant": "name",
               "field_declaration": "name"},
    param_nodes={"parameter": ("pattern", "type")},
    binds={"let_declaration": ("pattern", "value")},
    bind_targets={"for_expression": "pattern", "closure_parameters": ""},
    bases={"impl_item": "trait"},
    not_refs={"field_initializer": "field"},
    self_names=frozenset({"self"}),
)

_JAVA = GraphSpec(
    names=frozenset({"identifier", "type_identifier"}),
    skip=frozenset({"line_comment", "block_comment", "string_literal", "character_literal",
                    "text_block", "import_declaration", "package_declaration"}),
    calls={"method_invocation": "name", "object_creation_expression": "type"},
    members={"field_access": ("object", "field"), "method_invocation": ("object", "name"),
             "scoped_type_identifier": ("", "")},
    def_names={"class_declaration": "name", "interface_declaration": "name",
               "method_declaration": "name", "constructor_declaration": "name",
               "enum_declaration": "name", "record_declaration": "name",
               "annotation_type_declaration": "name"},
    param_nodes={"formal_parameter": ("name", "type"), "spread_parameter": ("", "")},
    binds={"variable_declarator": ("name", "value")},
    bases={"superclass": "", "super_interfaces": "", "extends_interfaces": ""},
    self_names=frozenset({"this"}),
)

_C_DEFS = {"function_declarator": "declarator", "struct_specifier": "name",
           "class_specifier": "name", "union_specifier": "name", "enum_specifier": "name",
           "type_definition": "declarator", "namespace_definition": "name",
           "preproc_def": "name", "preproc_function_def": "name"}

_C = GraphSpec(
    names=frozenset({"identifier", "field_identifier", "type_identifier",
                     "namespace_identifier"}),
    skip=frozenset({"comment", "string_literal", "raw_string_literal", "char_literal",
                    "system_lib_string", "preproc_include", "concatenated_string",
                    "preproc_params"}),  # (a macro's parameters name nothing)
    calls={"call_expression": "function"},
    members={"field_expression": ("argument", "field"),
             "qualified_identifier": ("scope", "name")},
    def_names=_C_DEFS,
    param_nodes={"parameter_declaration": ("declarator", "type")},
    binds={"init_declarator": ("declarator", "value")},
    bases={"base_class_clause": ""},
    self_names=frozenset({"this"}),
)

_RUBY = GraphSpec(
    names=frozenset({"identifier", "constant"}),
    skip=frozenset({"comment", "string", "heredoc_body", "regex", "subshell"}),
    code_inside=frozenset({"interpolation"}),
    calls={"call": "method"},
    members={"call": ("receiver", "method"), "scope_resolution": ("scope", "name")},
    def_names={"method": "name", "singleton_method": "name", "class": "name",
               "module": "name"},
    params=frozenset({"method_parameters", "block_parameters", "lambda_parameters"}),
    param_nodes={"optional_parameter": ("name", ""), "keyword_parameter": ("name", "")},
    binds={"assignment": ("left", "right")},
    bases={"superclass": ""},
    self_names=frozenset({"self"}),
)

_SHELL = GraphSpec(
    names=frozenset({"command_name"}),
    skip=frozenset({"comment", "string", "raw_string", "heredoc_body", "ansi_c_string"}),
    code_inside=frozenset({"command_substitution", "expansion"}),
    calls={"command": "name"},
    def_names={"function_definition": "name"},
    self_names=frozenset(),
)

SPECS: dict[str, GraphSpec] = {
    "python": _PY, "javascript": _JS, "typescript": _JS, "tsx": _JS, "go": _GO,
    "rust": _RUST, "java": _JAVA, "c": _C, "cpp": _C, "ruby": _RUBY, "shell": _SHELL,
}
"""The graph's node tables by language id (`indexer.chunk.languages`)."""
SPECS.update(MORE_SPECS)  # C#, PHP, Kotlin, Swift, Scala, Lua, Elixir
