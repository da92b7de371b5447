"""The graph's node tables for C#, PHP, Kotlin, Swift, Scala, Lua and Elixir
(`indexer.graph.specs` holds the others and merges these into `SPECS`).

These grammars keep fewer of their parts in named fields than the first ones, so a
field here may be a path (`GraphSpec`'s field paths, read by `indexer.graph.extract`):
`#0` / `#-1` the first / last named child, `@a|b` the first named child of type `a` or
`b`, `f@a|b` the first child in field `f` of those types, `^` the parent, and steps
joined by `.` (`suffix.suffix`: Swift's `x.name`). Pure data.
"""

from __future__ import annotations

from ctxd.indexer.graph.specs_base import GraphSpec

__all__ = ["MORE_SPECS"]

_CS_DEFS = dict.fromkeys((
    "class_declaration", "struct_declaration", "interface_declaration", "enum_declaration",
    "record_declaration", "method_declaration", "constructor_declaration",
    "destructor_declaration", "property_declaration", "delegate_declaration",
    "event_declaration", "local_function_statement", "enum_member_declaration",
    "namespace_declaration", "file_scoped_namespace_declaration", "operator_declaration"), "name")
_CS_TYPES = "identifier|generic_name|qualified_name|nullable_type|array_type"

_CSHARP = GraphSpec(
    names=frozenset({"identifier"}),
    skip=frozenset({"comment", "string_literal", "verbatim_string_literal",
                    "raw_string_literal", "character_literal",
                    "interpolated_string_expression", "using_directive"}),
    code_inside=frozenset({"interpolation"}),
    calls={"invocation_expression": "function", "object_creation_expression": "type"},
    members={"member_access_expression": ("expression", "name"),
             "conditional_access_expression": ("condition", "@member_binding_expression.name"),
             "generic_name": ("", "#0")},
    def_names=_CS_DEFS,
    param_nodes={"parameter": ("name", "type")},
    binds={"variable_declarator": ("name", "#1"), "assignment_expression": ("left", "right")},
    bind_types={"variable_declarator": f"^.type@{_CS_TYPES}"},
    bind_targets={"foreach_statement": "left", "catch_declaration": "name",
                  "declaration_expression": "name"},
    bases={"base_list": ""},
    not_refs={"argument": "name", "name_colon": ""},
    receivers={"this": "this", "base": "super()"},
    self_names=frozenset({"this"}),
)

_PHP_DEFS = dict.fromkeys((
    "class_declaration", "interface_declaration", "trait_declaration", "enum_declaration",
    "function_definition", "method_declaration", "const_element", "enum_case",
    "namespace_definition"), "name")

_PHP = GraphSpec(
    names=frozenset({"name", "variable_name"}),
    skip=frozenset({"comment", "string", "encapsed_string", "heredoc", "nowdoc",
                    "namespace_use_declaration", "namespace_name"}),  # (`\A\B\C`'s `A\B`)
    code_inside=frozenset({"variable_name", "member_call_expression",
                           "member_access_expression", "subscript_expression",
                           "heredoc_body"}),
    calls={"function_call_expression": "function", "member_call_expression": "name",
           "scoped_call_expression": "name", "nullsafe_member_call_expression": "name",
           "object_creation_expression": "@name|qualified_name"},
    members={"member_call_expression": ("object", "name"),
             "nullsafe_member_call_expression": ("object", "name"),
             "member_access_expression": ("object", "name"),
             "nullsafe_member_access_expression": ("object", "name"),
             "scoped_call_expression": ("scope", "name"),
             "class_constant_access_expression": ("#0", "#-1"),
             "scoped_property_access_expression": ("scope", "name"),
             "qualified_name": ("prefix@namespace_name", "#-1")},
    def_names=_PHP_DEFS,
    param_nodes={"simple_parameter": ("name", "type"),
                 "variadic_parameter": ("name", "type"),
                 "property_promotion_parameter": ("name", "type")},
    binds={"assignment_expression": ("left", "right")},
    bind_targets={"foreach_statement": "#-2", "catch_clause": "name"},
    bases={"base_clause": "", "class_interface_clause": ""},
    not_refs={"argument": "name"},
    receivers={"relative_scope": "=", "namespace_name": "=", "$this": "this", "self": "self",
               "static": "self", "parent": "super()"},
    self_names=frozenset({"$this"}),
)

_KT_DEFS = dict.fromkeys((
    "class_declaration", "object_declaration", "function_declaration"), "name")

_KOTLIN = GraphSpec(
    names=frozenset({"identifier"}),
    skip=frozenset({"line_comment", "block_comment", "string_literal",
                    "multiline_string_literal", "character_literal", "import",
                    "package_header"}),
    code_inside=frozenset({"interpolation"}),
    calls={"call_expression": "#0"},
    members={"navigation_expression": ("#0", "#-1")},
    def_names=_KT_DEFS,
    param_nodes={"parameter": ("@identifier", "#1"),
                 "class_parameter": ("@identifier", "@user_type|nullable_type")},
    binds={"property_declaration": ("@variable_declaration|multi_variable_declaration",
                                    "#-1"),
           "assignment": ("#0", "#-1")},
    bind_types={"property_declaration": "@variable_declaration.@user_type|nullable_type"},
    bind_targets={"for_statement": "@variable_declaration|multi_variable_declaration",
                  "lambda_parameters": ""},
    bases={"delegation_specifiers": ""},
    wrappers=frozenset({"variable_declaration"}),
    rules=frozenset({"object_literal", "type_parameter", "function_declaration",
                     "callable_reference", "value_argument"}),
    target_types=frozenset({"user_type", "nullable_type", "function_type"}),
    receivers={"this_expression": "this", "super_expression": "super()"},
    self_names=frozenset({"this"}),
)

_SWIFT_DEFS = dict.fromkeys((
    "class_declaration", "protocol_declaration", "function_declaration",
    "protocol_function_declaration", "typealias_declaration", "associatedtype_declaration"), "name")

_SWIFT = GraphSpec(
    names=frozenset({"simple_identifier", "type_identifier"}),
    skip=frozenset({"comment", "multiline_comment", "line_string_literal",
                    "multi_line_string_literal", "raw_string_literal", "import_declaration"}),
    code_inside=frozenset({"interpolated_expression"}),
    calls={"call_expression": "#0"},
    members={"navigation_expression": ("target", "suffix.suffix")},
    def_names=_SWIFT_DEFS,
    param_nodes={"parameter": ("name@simple_identifier", "name#-1"),
                 "lambda_parameter": ("name", "type")},
    binds={"property_declaration": ("name", "value"), "assignment": ("target", "result")},
    bind_types={"property_declaration": "@type_annotation.name"},
    bind_targets={"for_statement": "item", "if_statement": "bound_identifier",
                  "guard_statement": "bound_identifier", "catch_block": "error"},
    bases={"inheritance_specifier": "inherits_from"},
    wrappers=frozenset({"pattern", "directly_assignable_expression"}),
    target_types=frozenset({"type_annotation", "user_type", "optional_type"}),
    rules=frozenset({"class_declaration", "type_parameter", "function_declaration",
                     "protocol_function_declaration", "call_expression"}),
    not_refs={"value_argument_label": "", "parameter": "external_name"},
    receivers={"self_expression": "self", "super_expression": "super()"},
    self_names=frozenset({"self"}),
)

_SCALA_DEFS = dict.fromkeys((
    "class_definition", "object_definition", "trait_definition", "enum_definition",
    "function_definition", "function_declaration", "type_definition", "given_definition",
    "package_object", "extension_definition"), "name")

_SCALA = GraphSpec(
    names=frozenset({"identifier", "type_identifier"}),
    skip=frozenset({"comment", "block_comment", "string", "interpolated_string",
                    "character_literal", "import_declaration"}),
    code_inside=frozenset({"interpolation"}),
    calls={"call_expression": "function", "instance_expression": "#0"},
    members={"field_expression": ("value", "field"),
             "stable_type_identifier": ("#0", "#-1")},
    def_names=_SCALA_DEFS,
    param_nodes={"parameter": ("name", "type"), "class_parameter": ("name", "type"),
                 "binding": ("name", "type")},
    binds={"val_definition": ("pattern", "value"), "var_definition": ("pattern", "value"),
           "assignment_expression": ("left", "right")},
    bind_targets={"lambda_expression": "parameters", "enumerator": "#0",
                  "case_clause": "pattern"},
    bases={"extends_clause": ""},
    not_refs={"interpolated_string_expression": "interpolator"},
    rules=frozenset({"instance_expression"}),
    receivers={"super": "super()"},
    self_names=frozenset({"this", "super"}),
)

_LUA = GraphSpec(
    names=frozenset({"identifier"}),
    skip=frozenset({"comment", "string"}),
    calls={"function_call": "name"},
    members={"dot_index_expression": ("table", "field"),
             "method_index_expression": ("table", "method")},
    def_names={"function_declaration": "name"},
    params=frozenset({"parameters"}),
    binds={"assignment_statement": ("#0", "#-1")},
    bind_targets={"for_generic_clause": "@variable_list", "for_numeric_clause": "name"},
    not_refs={"field": "name"},
    self_names=frozenset({"self"}),
)

_ELIXIR = GraphSpec(
    names=frozenset({"identifier", "alias"}),
    skip=frozenset({"comment", "string", "charlist", "sigil", "quoted_atom"}),
    code_inside=frozenset({"interpolation"}),
    calls={"call": "target"},
    members={"dot": ("left", "right")},
    not_refs={"pair": "key"},
    rules=frozenset({"call", "unary_operator", "binary_operator"}),
    self_names=frozenset({"__MODULE__"}),
)

MORE_SPECS: dict[str, GraphSpec] = {
    "csharp": _CSHARP, "php": _PHP, "kotlin": _KOTLIN, "swift": _SWIFT, "scala": _SCALA,
    "lua": _LUA, "elixir": _ELIXIR,
}
"""The seven languages' node tables by language id (`indexer.chunk.languages`)."""
