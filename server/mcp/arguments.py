"""The one argument checker of the MCP tools: `ArgumentErrors`, a server middleware.

Arguments are checked against the input schema `tools/list` publishes, strictly (`"10"`
and `true` are not integers), before the tool runs: nested too deep, an argument the tool
does not have, a value the schema refuses, a text argument holding a control character
(`server.text_args`). What fails is a `validation_error` naming each field, its value (at
most `text_args.SHOWN_CHARS` of it) and what the field accepts; an unknown tool name is a
`NOT_FOUND` naming the tools this server has.
"""

import json
import re
from typing import Any

import jsonschema
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from ctxd.indexer.errors import ToolNotFound, ValidationError
from ctxd.server.mcp import markdown_status as status_md
from ctxd.server.text_args import SHOWN_CHARS, check_text, shown, too_deep

MAX_ARGUMENT_DEPTH = 8
"""Tool arguments are at most lists of strings: anything nested deeper is refused before
it is validated (or echoed)."""

_ARG_ERROR = re.compile(r"^Error executing tool (\S+): \d+ validation errors? for \S+Arguments")
_UNKNOWN_TOOL = re.compile(r"^Unknown tool: (.*)$", re.DOTALL)
_REQUIRED = re.compile(r"^'(.+)' is a required property")


def _expected(prop: dict[str, Any]) -> str:
    """What a property's schema accepts, in words: `an integer from 1 to 100 (default 30)`."""
    variants = prop.get("anyOf") or [prop]
    words = []
    for v in variants:
        kind = v.get("type", "value")
        text = {"integer": "an integer", "number": "a number", "string": "a string",
                "array": "a list", "boolean": "true or false", "null": "null",
                "object": "an object"}.get(str(kind), str(kind))
        if kind == "array" and isinstance(v.get("items"), dict) and "type" in v["items"]:
            text += f" of {v['items']['type']}s"
        if "maxLength" in v:
            text += f" of at most {v['maxLength']} characters"
        lo, hi = v.get("minimum"), v.get("maximum")
        if lo is not None and hi is not None:
            text += f" from {lo} to {hi}"
        elif lo is not None:
            text += f" >= {lo}"
        if "enum" in v:
            text = "one of " + ", ".join(json.dumps(x) for x in v["enum"])
        words.append(text)
    out = " or ".join(words)
    if "default" in prop:
        out += f" (default {json.dumps(prop['default'])}; omit it for the default)"
    return out


def schema_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Every way `arguments` break a JSON schema: `{"field", "problem", "value"?}`, by field.

    A value of the wrong type is reported as the JSON the client sent (`null`, `"ten"`)
    with what the field accepts."""
    validator = jsonschema.Draft202012Validator(schema)
    props = schema.get("properties", {})
    out: list[dict[str, Any]] = []
    for e in sorted(validator.iter_errors(arguments), key=lambda e: list(map(str, e.path))):
        path = ".".join(str(p) for p in e.path)
        m = _REQUIRED.match(e.message)
        if m and not path:
            out.append({"field": m.group(1), "problem": "is required"})
            continue
        problem = e.message
        if len(echo := repr(e.instance)) > SHOWN_CHARS:  # never send a megabyte back
            size = len(json.dumps(e.instance, default=str))
            problem = problem.replace(echo, f"a value of {size} characters")
        top = str(e.path[0]) if e.path else ""
        if e.validator in ("type", "anyOf") and len(e.path) == 1 and top in props:
            sent = shown(json.dumps(e.instance, ensure_ascii=False, default=str))
            problem = f"got {sent}, expected {_expected(props[top])}"
            if e.instance is None:
                problem += ("; a client that turns text into numbers sends null for text "
                            "that is not a number")
        out.append({"field": path or "(arguments)", "problem": problem,
                    "value": shown(e.instance)})
    return out


def argument_error(tool: str, problems: list[dict[str, Any]], fallback: str = ""
                   ) -> ValidationError:
    """The `validation_error` for arguments that break `tool`'s input schema."""
    what = "; ".join(f"{p['field']} {p['problem']}" if p["problem"] == "is required"
                     else f"{p['field']}: {p['problem']}" for p in problems)
    return ValidationError(
        f"invalid arguments for {tool}: {what or fallback}",
        hint="Fix the named arguments; `tools/list` gives each tool's types, bounds and "
        "defaults.",
        details={"fields": problems} if problems else {},
    )


class ArgumentErrors:
    """Server middleware: arguments that fail a tool's input schema come back as a
    `validation_error` naming each field, its value and the bound it broke (instead of
    pydantic's message), so the model can fix its call; an unknown tool name comes back as
    `NOT_FOUND` with the tools this server has, like every other error. Before the tool
    runs, arguments nested deeper than `MAX_ARGUMENT_DEPTH`, an argument the tool does not
    have (which the SDK would drop silently), any value the published schema refuses
    (pydantic alone would turn `"10"` and `true` into integers) and a text argument holding
    a control character (`text_args`) are refused the same way."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server
        self._schemas: dict[str, dict[str, Any]] | None = None

    async def schemas(self) -> dict[str, dict[str, Any]]:
        """Each tool's input schema (the tool set is fixed once the server is built: read
        once, not on every call)."""
        if self._schemas is None:
            self._schemas = {t.name: t.input_schema for t in await self.server.list_tools()}
        return self._schemas

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/call" and (refused := await self._refuse(ctx)) is not None:
            return refused
        result = await call_next(ctx)
        if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
            return result
        content = result.get("content") or []
        text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
        if unknown := _UNKNOWN_TOOL.match(text):
            return await self._unknown_tool(result, unknown.group(1))
        m = _ARG_ERROR.match(text)
        if not m:
            return result
        tool = m.group(1)
        arguments = dict((ctx.params or {}).get("arguments") or {})
        schemas = await self.schemas()
        problems = schema_problems(schemas.get(tool, {}), arguments) if tool in schemas else []
        fallback = " ".join(line.strip() for line in text.split("\n")[1:3])
        err = argument_error(tool, problems, shown(fallback))
        new = dict(result)
        new["content"] = [{"type": "text", "text": f"Error executing tool {tool}: "
                           + status_md.error_text(err)}]
        return new

    async def _refuse(self, ctx: ServerRequestContext[Any, Any]) -> HandlerResult | None:
        """The error answer for arguments no tool should run with, or None."""
        params = ctx.params or {}
        tool = str(params.get("name", ""))
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return None  # the SDK's own validation answers that
        schemas = await self.schemas()
        if tool not in schemas:
            return None  # the unknown tool is answered after the call
        known = sorted(schemas[tool].get("properties", {}))
        try:
            if too_deep(arguments, MAX_ARGUMENT_DEPTH):
                raise ValidationError(
                    f"invalid arguments for {tool}: nested deeper than {MAX_ARGUMENT_DEPTH} "
                    "levels",
                    hint="Arguments are strings, numbers, booleans and lists of strings "
                    "(`tools/list` gives each tool's).", details={"field": "arguments"})
            unknown = sorted(set(arguments) - set(known))
            if unknown:
                raise ValidationError(
                    f"invalid arguments for {tool}: unknown argument"
                    f"{'s' if len(unknown) > 1 else ''} {shown(', '.join(unknown))}",
                    hint=f"{tool} takes: {', '.join(known) or 'no arguments'}.",
                    details={"field": shown(unknown[0]), "value": shown(arguments[unknown[0]]),
                             "known": known})
            # Strictly the schema `tools/list` publishes: "10" and true are not integers
            # (pydantic alone would coerce them, yet refuse 5.5).
            if problems := schema_problems(schemas[tool], arguments):
                raise argument_error(tool, problems)
            check_text(arguments, allow_nul=frozenset({"query"}))
        except ValidationError as err:
            text = f"Error executing tool {tool}: {status_md.error_text(err)}"
            return CallToolResult(content=[TextContent(type="text", text=text)],
                                  is_error=True).model_dump(by_alias=True, exclude_none=True,
                                                            mode="json")
        return None

    async def _unknown_tool(self, result: dict[str, Any], name: str) -> HandlerResult:
        names = sorted(await self.schemas())
        err = ToolNotFound(
            f"Unknown tool: {name}",
            hint=f"This server's tools: {', '.join(names)} (`tools/list` describes them).",
            details={"field": "name", "value": name},
        )
        new = dict(result)
        new["content"] = [{"type": "text", "text": status_md.error_text(err)}]
        return new
