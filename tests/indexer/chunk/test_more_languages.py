"""C#, PHP, Kotlin, Swift, Scala, Lua and Elixir definitions (trimmed from serilog, guzzle,
clikt, Alamofire, akka-style Scala, lazy.nvim and plug): kinds, containers, line ranges."""

from __future__ import annotations

import pytest

from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
from ctxd.indexer.chunk.conditionals import first_branches
from ctxd.indexer.chunk.summary import file_summary
from ctxd.indexer.chunk.syntax import Definition, iter_definitions, parse_definitions
from ctxd.indexer.models import Symbol


def rows(language: str, text: str) -> list[tuple[str, str, int, int, int]]:
    """(kind, qualified name, first line, name line, last line) of every definition."""
    defs = parse_definitions(language, text)
    assert defs is not None, f"{language}: no parse"
    return [(d.kind, d.qualname, d.start_line, d.line, d.end_line)
            for d in iter_definitions(defs)]


def count(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


CSHARP = """\
using System.Diagnostics;

namespace Serilog.Core;

/// <summary>
/// The core Serilog logging pipeline.
/// </summary>
public sealed class Logger : ILogger, ILogEventSink, IDisposable
#if FEATURE_ASYNCDISPOSABLE
    , IAsyncDisposable
#endif
{
    static readonly object[] NoPropertyValues = Array.Empty<object>();
    readonly ILogEventSink _sink;
    public const int MaxDepth = 10, MinDepth = 1;

    internal Logger(
        ILogEventSink sink,
#if FEATURE_ASYNCDISPOSABLE
        Func<ValueTask>? disposeAsync,
#endif
        LevelOverrideMap? overrideMap)
    {
        _sink = sink;
    }

    internal bool HasOverrideMap => _overrideMap != null;

    [MessageTemplateFormatMethod("messageTemplate")]
    public void Write<T>(LogEventLevel level, string messageTemplate, T propertyValue)
    {
        Write(level, messageTemplate, propertyValue);
    }

    public record struct Span(int Start, int Length);
}

public interface ILogEventSink
{
    void Emit(LogEvent logEvent);
}

public enum LogEventLevel { Verbose, Debug }
"""


def test_csharp_classes_members_and_constants() -> None:
    assert rows("csharp", CSHARP) == [
        ("class", "Logger", 5, 8, 36),
        ("constant", "Logger.NoPropertyValues", 13, 13, 13),
        ("constant", "Logger.MaxDepth", 15, 15, 15),
        ("constant", "Logger.MinDepth", 15, 15, 15),
        ("constructor", "Logger.Logger", 17, 17, 25),
        ("property", "Logger.HasOverrideMap", 27, 27, 27),
        ("method", "Logger.Write", 29, 30, 33),
        ("struct", "Logger.Span", 35, 35, 35),
        ("interface", "ILogEventSink", 38, 38, 41),
        ("method", "ILogEventSink.Emit", 40, 40, 40),
        ("enum", "LogEventLevel", 43, 43, 43),
    ]


ILOGGER = """\
public interface ILogger
{
    /// <summary>Write a log event.</summary>
    void Warning<T0>(string messageTemplate, T0 propertyValue0)
#if FEATURE_DEFAULT_INTERFACE
        => Write(LogEventLevel.Warning, messageTemplate, propertyValue0)
#endif
    ;

#if FEATURE_SPAN
    EventProperty[] Construct(ReadOnlySpan<object?> values)
#else
    EventProperty[] Construct(object?[] values)
#endif
    {
        return null;
    }
}
"""


def test_csharp_conditional_compilation_reads_the_first_branches() -> None:
    """serilog's ILogger: directives inside declarations made the parse mostly errors."""
    blanked = first_branches(ILOGGER.encode())
    assert len(blanked) == len(ILOGGER.encode())
    assert b"#if" not in blanked and b"object?[] values" not in blanked
    assert rows("csharp", ILOGGER) == [
        ("interface", "ILogger", 1, 1, 18),
        ("method", "ILogger.Warning", 3, 4, 8),
        ("method", "ILogger.Construct", 11, 11, 17),
    ]
    assert first_branches(b"class A {}\n") == b"class A {}\n"


PHP = """\
<?php

namespace GuzzleHttp;

use Psr\\Http\\Message\\RequestInterface;

/**
 * @final
 */
class Client implements ClientInterface, \\Psr\\Http\\Client\\ClientInterface
{
    use ClientTrait;

    public const MAJOR_VERSION = 7;

    private $config;

    public function __construct(array $config = [])
    {
        $this->config = $config;
    }

    public function send(RequestInterface $request, array $options = []): ResponseInterface
    {
        return $this->sendAsync($request, $options)->wait();
    }
}

interface ClientInterface
{
    public function request(string $method, $uri, array $options = []): ResponseInterface;
}

trait ClientTrait
{
    abstract public function request(string $method, $uri, array $options = []);
}

function describe_type($input): string
{
    return \\gettype($input);
}
"""


def test_php_classes_traits_methods_functions() -> None:
    assert rows("php", PHP) == [
        ("class", "Client", 7, 10, 27),
        ("constant", "Client.MAJOR_VERSION", 14, 14, 14),
        ("constructor", "Client.__construct", 18, 18, 21),
        ("method", "Client.send", 23, 23, 26),
        ("interface", "ClientInterface", 29, 29, 32),
        ("method", "ClientInterface.request", 31, 31, 31),
        ("trait", "ClientTrait", 34, 34, 37),
        ("method", "ClientTrait.request", 36, 36, 36),
        ("function", "describe_type", 39, 39, 42),
    ]


KOTLIN = """\
package com.github.ajalt.clikt.core

import com.github.ajalt.clikt.output.HelpFormatter

/**
 * The [CliktCommand] that all other commands extend.
 */
abstract class CliktCommand(
    name: String? = null,
) : BaseCliktCommand<CliktCommand>(name) {
    val commandName: String = "cli"

    constructor(help: String) : this(null)

    open fun run() {
        val local = 1
        fun helper() = local
    }

    companion object {
        const val DEFAULT_NAME = "cli"
        fun create(): CliktCommand = TODO()
    }

    enum class Mode { STRICT, LENIENT }
}

interface ParameterHolder {
    fun registerOption(option: GroupableOption)
}

object Registry

fun CliktCommand.main(argv: List<String>) {}

fun <T : BaseCliktCommand<T>> T.subcommands(vararg commands: T): T = this

typealias Localizer = (String) -> String
"""


def test_kotlin_classes_objects_and_extension_functions() -> None:
    assert rows("kotlin", KOTLIN) == [
        ("class", "CliktCommand", 5, 8, 26),
        ("property", "CliktCommand.commandName", 11, 11, 11),
        ("constructor", "CliktCommand.CliktCommand", 13, 13, 13),
        ("method", "CliktCommand.run", 15, 15, 18),
        ("constant", "CliktCommand.DEFAULT_NAME", 21, 21, 21),
        ("method", "CliktCommand.create", 22, 22, 22),
        ("enum", "CliktCommand.Mode", 25, 25, 25),
        ("interface", "ParameterHolder", 28, 28, 30),
        ("method", "ParameterHolder.registerOption", 29, 29, 29),
        ("class", "Registry", 32, 32, 32),
        ("method", "CliktCommand.main", 34, 34, 34),
        ("function", "subcommands", 36, 36, 36),
        ("type", "Localizer", 38, 38, 38),
    ]


SWIFT = """\
import Foundation

/// `Session` creates and manages Alamofire's `Request` types.
open class Session: @unchecked Sendable {
    public static let `default` = Session()
    public let rootQueue: DispatchQueue

    public init(rootQueue: DispatchQueue) {
        self.rootQueue = rootQueue
    }

    open func request(_ convertible: URLConvertible) -> DataRequest {
        let request = DataRequest(convertible: convertible)
        return request
    }
}

public protocol RequestAdapter: Sendable {
    func adapt(_ urlRequest: URLRequest) throws -> URLRequest
}

public enum AFError: Error {
    case explicitlyCancelled
}

extension Session: RequestDelegate {
    func cleanup(after request: Request) {}
}

struct Empty: Decodable {}

public typealias AFResult<Success> = Result<Success, AFError>

let maxRetries = 3
"""


def test_swift_types_extensions_and_members() -> None:
    assert rows("swift", SWIFT) == [
        ("class", "Session", 3, 4, 16),
        ("property", "Session.default", 5, 5, 5),
        ("property", "Session.rootQueue", 6, 6, 6),
        ("constructor", "Session.init", 8, 8, 10),
        ("method", "Session.request", 12, 12, 15),
        ("interface", "RequestAdapter", 18, 18, 20),
        ("method", "RequestAdapter.adapt", 19, 19, 19),
        ("enum", "AFError", 22, 22, 24),
        ("extension", "Session", 26, 26, 28),
        ("method", "Session.cleanup", 27, 27, 27),
        ("struct", "Empty", 30, 30, 30),
        ("type", "AFResult", 32, 32, 32),
        ("constant", "maxRetries", 34, 34, 34),
    ]


SCALA = """\
package akka.actor

import scala.concurrent.Future

/** An actor. */
abstract class Actor(context: ActorContext) extends Receiver {
  val self: ActorRef = context.self
  def receive: Receive
  def preStart(): Unit = {
    val local = 1
  }
  def this() = this(null)
}

object Actor {
  final val MaxDepth = 10
  type Receive = PartialFunction[Any, Unit]
}

trait Receiver { def handle(msg: Any): Unit }

case class Terminated(ref: ActorRef)

enum Color { case Red, Green }
"""


def test_scala_classes_objects_traits() -> None:
    assert rows("scala", SCALA) == [
        ("class", "Actor", 5, 6, 13),
        ("property", "Actor.self", 7, 7, 7),
        ("method", "Actor.receive", 8, 8, 8),
        ("method", "Actor.preStart", 9, 9, 11),
        ("constructor", "Actor.this", 12, 12, 12),
        ("class", "Actor", 15, 15, 18),
        ("constant", "Actor.MaxDepth", 16, 16, 16),
        ("type", "Actor.Receive", 17, 17, 17),
        ("trait", "Receiver", 20, 20, 20),
        ("method", "Receiver.handle", 20, 20, 20),
        ("class", "Terminated", 22, 22, 22),
        ("enum", "Color", 24, 24, 24),
    ]


LUA = """\
local M = {}

---@param opts LazyConfig
function M.setup(opts)
  M.options = opts
end

function M:load(name) return name end

local function resolve(plugin)
  return plugin
end

return M
"""


def test_lua_module_functions_have_their_table_as_container() -> None:
    assert rows("lua", LUA) == [
        ("function", "M.setup", 3, 4, 6),
        ("method", "M.load", 8, 8, 8),
        ("function", "resolve", 10, 10, 12),
    ]


ELIXIR = '''\
defmodule Plug.Conn do
  @moduledoc """
  The Plug connection.
  """

  defstruct adapter: nil, halted: false

  @doc "Assigns a value to a key in the connection."
  @spec assign(t, atom, term) :: t
  def assign(%Conn{assigns: assigns} = conn, key, value) when is_atom(key) do
    %{conn | assigns: Map.put(assigns, key, value)}
  end

  defp run_before_send(conn), do: conn

  defmodule Unfetched do
    defstruct [:aspect]
  end
end

defprotocol Plug.Exception do
  def status(exception)
end

defimpl Inspect, for: Plug.Conn do
  def inspect(conn, opts), do: conn
end
'''


def test_elixir_modules_protocols_impls_and_functions() -> None:
    assert rows("elixir", ELIXIR) == [
        ("module", "Plug.Conn", 1, 1, 19),
        ("function", "Plug.Conn.assign", 8, 10, 12),
        ("function", "Plug.Conn.run_before_send", 14, 14, 14),
        ("module", "Plug.Conn.Unfetched", 16, 16, 18),
        ("interface", "Plug.Exception", 21, 21, 23),
        ("function", "Plug.Exception.status", 22, 22, 22),
        ("impl", "Plug.Conn", 25, 25, 27),
        ("function", "Plug.Conn.inspect", 26, 26, 26),
    ]


@pytest.mark.parametrize(("path", "text"), [
    ("src/Serilog/Core/Logger.cs", CSHARP),
    ("src/Client.php", PHP),
    ("core/CliktCommand.kt", KOTLIN),
    ("Source/Session.swift", SWIFT),
    ("actor/Actor.scala", SCALA),
])
def test_checkpoints_are_cut_at_definitions(path: str, text: str) -> None:
    """Small budgets force cuts: they fall between definitions, never inside one that
    fits, and checkpoints belong to the definitions they hold."""
    opts = ChunkOptions(max_tokens=30, target_tokens=15, min_tokens=3)
    fc = chunk_file(path, text, opts, count)
    assert fc.windows_reason is None and len(fc.chunks) > 3
    assert sum(1 for c in fc.chunks if c.symbol) >= 3
    lines = text.split("\n")
    for s in fc.symbols:
        if sum(count([line + "\n" for line in lines[s.line - 2 : s.end_line]])) > 30:
            continue
        for c in fc.chunks:
            assert not s.line < c.start_line <= s.end_line, (s, c.start_line)


def test_file_summary_lists_the_new_languages_types_and_methods() -> None:
    fc = chunk_file("src/Client.php", PHP, ChunkOptions(), count)
    symbols: list[Symbol] = fc.symbols
    summary = file_summary("src/Client.php", "php", PHP, symbols)
    assert "Client" in summary and "send" in summary and "describe_type" in summary


def test_definitions_nest_inside_their_parents() -> None:
    for language, text in (("csharp", CSHARP), ("php", PHP), ("kotlin", KOTLIN),
                           ("swift", SWIFT), ("scala", SCALA)):
        defs = parse_definitions(language, text)
        assert defs is not None

        def check(d: Definition) -> None:
            assert d.start_line <= d.line <= d.end_line
            for c in d.children:
                assert d.start_line <= c.start_line and c.end_line <= d.end_line
                check(c)

        for d in defs:
            check(d)


C_IFDEF = """\
#include "jv.h"

#ifdef WIN32
int umain(int argc, wchar_t* argv[]) {
#else
int main(int argc, char* argv[]) {
#endif
  jv_free(jv_null());
#  if defined(HAVE_SETLOCALE) && \\
     defined(HAVE_LOCALE_H)
  setlocale(LC_ALL, "");
#  endif
  return 0;
}

static int helper(void) {
  return 1;
}
"""


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_c_conditional_compilation_reads_the_first_branches(language: str) -> None:
    """jq's main.c: `#ifdef WIN32` around a function's head made the parse mostly errors
    (no symbols, no code graph); the first branches parse, with every offset kept."""
    blanked = first_branches(C_IFDEF.encode())
    assert len(blanked) == len(C_IFDEF.encode())
    assert b"defined(HAVE_LOCALE_H)" not in blanked and b"char* argv" not in blanked
    assert b'setlocale(LC_ALL, "");' in blanked
    assert [(kind, name) for kind, name, *_ in rows(language, C_IFDEF)] == [
        ("function", "umain"), ("function", "helper")]
