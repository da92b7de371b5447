"""The C#, PHP, Kotlin, Swift, Scala, Lua and Elixir gold of bench/graph_eval, written by
hand (no language server for these here).

    .venv/bin/python -m bench.graph_eval.hand_gold_more [--work DIR]

As `hand_gold` (the Go/Rust/C gold): for each target `grep -rnw NAME` over the pinned tree
(corpus.py) listed the candidates and each was kept or dropped by reading it, by what the
language's server answers for `references` with the declaration excluded: a method call
counts when its receiver's static type is the definition's class (a variable's declared
or constructed type, a field's, a parameter's, `this`/`self`/`$this` in the class); a
call through an interface or protocol the class implements is a reference to the
interface's method, not to the class's (as `hand_gold` reads Rust traits); the same name
on another class is another definition; comments, doc comments (C# `<see cref>`, KDoc,
Swift `///`), strings and Markdown are never references. Lua: `M.f()` / `obj:f()` where
the table is the module (`local M = require("x")`) or the file's own table; Elixir:
`Mod.f(...)`, an aliased `Alias.f(...)`, a bare `f(...)` (or a pipe `x |> f()`) inside
the defining module or a module that imports it. Writes gold/<language>.jsonl in the
record format of the other gold files (`"analyser": "hand"`, `set` dev).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench.graph_eval.corpus import DEFAULT_MIRRORS, fetch, pin_named
from bench.graph_eval.hand_gold import DEFAULT_WORK, _lines, gold_record, write_gold

LANGUAGES = ("csharp", "php", "kotlin", "swift", "scala", "lua", "elixir")

_KT = "clikt/src/commonMain/kotlin/com/github/ajalt/clikt"
_KTT = "test/src/commonTest/kotlin/com/github/ajalt/clikt"
_SC = "shared/src/main/scala/scopt"

TARGETS: list[dict[str, Any]] = [
    # ---- C#: serilog -----------------------------------------------------------------
    {"repo": "serilog", "name": "MessageTemplateParser",
     "qualified_name": "MessageTemplateParser", "category": "distinctive",
     "definition": "src/Serilog/Parsing/MessageTemplateParser.cs:21",
     "rule": "the class: `new MessageTemplateParser()`, field and variable types, the "
             "`using X = Serilog.Parsing.MessageTemplateParser;` alias (an import); the "
             "`<see cref>` doc comment (line 26) and the constructor (28) are not",
     "references": ["src/Serilog/Formatting/Display/MessageTemplateTextFormatter.cs:44",
                    "src/Serilog/Capturing/MessageTemplateProcessor.cs:19",
                    "test/Serilog.PerformanceTests/MessageTemplateParsingBenchmark.cs:9",
                    *_lines("test/Serilog.Tests/Formatting/Json/JsonFormatterTests.cs",
                            228, 256, 269, 282),
                    "test/Serilog.Tests/Support/Some.cs:78",
                    *_lines("test/Serilog.Tests/Parsing/MessageTemplateParserTests.cs",
                            9, 112, 452),
                    "test/Serilog.Tests/Core/MessageTemplateTests.cs:1:import",
                    "test/Serilog.Tests/Core/MessageTemplateTests.cs:136",
                    "test/Serilog.Tests/Core/LogEventPropertyCapturingTests.cs:199",
                    "test/Serilog.Tests/Rendering/MessageTemplateRendererTests.cs:5"]},
    {"repo": "serilog", "name": "Parse", "qualified_name": "MessageTemplateParser.Parse",
     "category": "common", "definition": "src/Serilog/Parsing/MessageTemplateParser.cs:41",
     "rule": "receiver of static type MessageTemplateParser (`new MessageTemplateParser()`, "
             "a `MessageTemplateParser _parser` field, `var p = new ...`); calls through "
             "IMessageTemplateParser (`_innerParser`, MessageTemplateCache) are the "
             "interface's; int/Enum/TimeSpan/Guid.Parse and the test's own static Parse "
             "are other methods",
     "references": ["src/Serilog/Formatting/Display/MessageTemplateTextFormatter.cs:44",
                    *_lines("test/Serilog.PerformanceTests/MessageTemplateParsingBenchmark.cs",
                            14, 20, 26),
                    *_lines("test/Serilog.Tests/Formatting/Json/JsonFormatterTests.cs",
                            230, 258, 271, 284),
                    "test/Serilog.Tests/Support/Some.cs:78",
                    *_lines("test/Serilog.Tests/Parsing/MessageTemplateParserTests.cs",
                            9, 113, 453),
                    "test/Serilog.Tests/Core/MessageTemplateTests.cs:136",
                    "test/Serilog.Tests/Core/LogEventPropertyCapturingTests.cs:199",
                    "test/Serilog.Tests/Rendering/MessageTemplateRendererTests.cs:14"]},
    {"repo": "serilog", "name": "BindProperty", "qualified_name": "Logger.BindProperty",
     "category": "common", "definition": "src/Serilog/Core/Logger.cs:1430",
     "rule": "receiver of static type Logger (ILogger's default implementation calls it on "
             "`static readonly Logger DefaultLoggerImpl`); `Log.Logger.BindProperty` and the "
             "test's `log` are ILogger (the interface's method); SilentLogger's and "
             "DisposableLogger's are other methods",
     "references": ["src/Serilog/ILogger.cs:1367"]},
    {"repo": "serilog", "name": "SafeAggregateSink", "qualified_name": "SafeAggregateSink",
     "category": "distinctive", "definition": "src/Serilog/Core/Sinks/SafeAggregateSink.cs:17",
     "rule": "the class's constructions (its constructor at line 21 is a definition)",
     "references": [*_lines("src/Serilog/LoggerConfiguration.cs", 135, 143),
                    *_lines("test/Serilog.Tests/Core/SafeAggregateSinkTests.cs", 10, 25)]},
    # ---- PHP: guzzle (its tests/ are export-ignored: src/ only) -----------------------
    {"repo": "guzzle", "name": "HandlerStack", "qualified_name": "HandlerStack",
     "category": "distinctive", "definition": "src/HandlerStack.php:15",
     "rule": "the class: `use GuzzleHttp\\HandlerStack;` (an import), a return type, "
             "`HandlerStack::create()`; docblock `@param`/`@return` lines are comments",
     "references": ["src/Client.php:60", "src/Handler/MockHandler.php:6:import",
                    *_lines("src/Handler/MockHandler.php", 55, 57)]},
    {"repo": "guzzle", "name": "push", "qualified_name": "HandlerStack.push",
     "category": "common", "definition": "src/HandlerStack.php:146",
     "rule": "receiver of class HandlerStack (`$stack = new self(...)` in create())",
     "references": _lines("src/HandlerStack.php", 50, 51, 52, 53)},
    {"repo": "guzzle", "name": "request", "qualified_name": "Client.request",
     "category": "common", "definition": "src/Client.php:185",
     "rule": "`$this->request()` in Client (__call); ClientTrait's `$this->request()` calls "
             "name the trait's own abstract request(); `$request` variables are not the "
             "method",
     "references": ["src/Client.php:92"]},
    {"repo": "guzzle", "name": "chooseHandler", "qualified_name": "Utils.chooseHandler",
     "category": "distinctive", "definition": "src/Utils.php:86",
     "rule": "`Utils::chooseHandler()` (functions.php's choose_handler is another name)",
     "references": ["src/functions.php:61", "src/HandlerStack.php:49"]},
    # ---- Kotlin: clikt ---------------------------------------------------------------
    {"repo": "clikt", "name": "splitOptionPrefix", "qualified_name": "splitOptionPrefix",
     "category": "distinctive",
     "definition": f"{_KT}/parameters/options/Option.kt:133",
     "rule": "internal top-level function of package ...parameters.options: its imports and "
             "calls; clikt-mordant's PromptOptions.kt declares a private one of the same "
             "name that its own call (line 42) names",
     "references": [f"{_KT}/parsers/ParserInternals.kt:6:import",
                    *_lines(f"{_KT}/parsers/ParserInternals.kt", 99, 177, 302),
                    f"{_KT}/parameters/options/Option.kt:127",
                    f"{_KT}/sources/ValueSource.kt:8:import", f"{_KT}/sources/ValueSource.kt:52"]},
    {"repo": "clikt", "name": "echoFormattedHelp",
     "qualified_name": "BaseCliktCommand.echoFormattedHelp", "category": "distinctive",
     "definition": f"{_KT}/core/BaseCliktCommand.kt:291",
     "rule": "`command: T` with `T : BaseCliktCommand<T>` (CommandLineParser.main), and the "
             "implicit receiver of the extension `CliktCommand.test(...)` (CliktTesting.kt)",
     "references": [*_lines(f"{_KT}/parsers/CommandLineParser.kt", 41, 60),
                    "clikt-mordant/src/commonMain/kotlin/com/github/ajalt/clikt/testing/"
                    "CliktTesting.kt:236"]},
    {"repo": "clikt", "name": "PlaintextHelpFormatter",
     "qualified_name": "PlaintextHelpFormatter", "category": "distinctive",
     "definition": f"{_KT}/output/PlaintextHelpFormatter.kt:11",
     "rule": "imports, constructor calls and `shouldBeInstanceOf<PlaintextHelpFormatter>()`",
     "references": [f"{_KT}/core/CoreCliktCommand.kt:3:import", f"{_KT}/core/Context.kt:5:import",
                    f"{_KT}/core/Context.kt:441",
                    *_lines(f"{_KTT}/output/PlaintextHelpFormatterTest.kt", 46, 405, 421, 437,
                            482)]},
    {"repo": "clikt", "name": "getFormattedHelp",
     "qualified_name": "BaseCliktCommand.getFormattedHelp", "category": "common",
     "definition": f"{_KT}/core/BaseCliktCommand.kt:271",
     "rule": "every call: the receivers are commands (CliktCommand subclasses, `p`, `c`, "
             "`C()`, a `parse` chain's command), and the bare call in echoFormattedHelp",
     "references": [f"{_KT}/core/BaseCliktCommand.kt:292",
                    f"{_KTT}/parameters/OptionTest.kt:84",
                    *_lines(f"{_KTT}/parameters/SubcommandTest.kt", 257, 282),
                    *_lines(f"{_KTT}/output/PlaintextHelpFormatterTest.kt", 44, 86, 547),
                    f"{_KTT}/output/MordantMarkdownHelpFormatterTest.kt:34",
                    *_lines(f"{_KTT}/output/MordantHelpFormatterTest.kt", 36, 74, 736),
                    *_lines(f"{_KTT}/core/CliktCommandTest.kt", 170, 190)]},
    # ---- Swift: Alamofire ------------------------------------------------------------
    {"repo": "alamofire", "name": "Redirector", "qualified_name": "Redirector",
     "category": "distinctive", "definition": "Source/Features/RedirectHandler.swift:51",
     "rule": "the struct: constructions, `Redirector.follow`, type annotations, `extension "
             "Redirector` and `where Self == Redirector` (sourcekit-lsp counts them); the "
             "tests see it through `@testable import Alamofire`",
     "references": ["Tests/DataStreamTests.swift:988",
                    *_lines("Tests/RedirectHandlerTests.swift", 46, 72, 99, 123, 149, 177, 206,
                            212),
                    *_lines("Source/Features/RedirectHandler.swift", 63, 65, 80, 97, 99, 102,
                            108, 109)]},
    {"repo": "alamofire", "name": "ConnectionLostRetryPolicy",
     "qualified_name": "ConnectionLostRetryPolicy", "category": "distinctive",
     "definition": "Source/Features/RetryPolicy.swift:380",
     "rule": "the class: constructions and type names",
     "references": [*_lines("Tests/RetryPolicyTests.swift", 432, 445),
                    "Source/Features/RetryPolicy.swift:405",
                    "Source/Features/RetryPolicy.swift:407:call",  # `: T { T() }`
                    *_lines("Source/Features/RetryPolicy.swift", 424, 425)]},
    {"repo": "alamofire", "name": "stopListening",
     "qualified_name": "NetworkReachabilityManager.stopListening", "category": "common",
     "definition": "Source/Features/NetworkReachabilityManager.swift:225",
     "rule": "receiver of type NetworkReachabilityManager (`manager?` in the tests, the "
             "class's own bare calls); OfflineRetrier's `currentMonitor?.stopListening()` "
             "is PathMonitor's",
     "references": [*_lines("Tests/NetworkReachabilityManagerTests.swift", 101, 124, 144, 164),
                    *_lines("Source/Features/NetworkReachabilityManager.swift", 156, 174)]},
    {"repo": "alamofire", "name": "uploadProgress", "qualified_name": "Request.uploadProgress",
     "category": "common", "definition": "Source/Core/Request.swift:850",
     "rule": "the method `uploadProgress(queue:closure:)`: calls with a `queue:` label on a "
             "request chain, and the bare call in Request's extension (Concurrency.swift:40); "
             "Request's property `uploadProgress` (line 165, used at 666-688) and the "
             "`uploadProgress(bufferingPolicy:)` overload (`request.uploadProgress()`) are "
             "other definitions",
     "references": [*_lines("Tests/UploadTests.swift", 231, 742),
                    "Tests/ConcurrencyTests.swift:728", "Source/Features/Concurrency.swift:40"]},
    {"repo": "alamofire", "name": "didCompleteTask", "qualified_name": "Request.didCompleteTask",
     "category": "common", "definition": "Source/Core/Request.swift:515",
     "rule": "`request?.didCompleteTask(task, with:)` (a Request from the state provider); "
             "Session's and the SessionStateProvider protocol's didCompleteTask and the "
             "`didCompleteTask:` argument labels of EventMonitor are other names",
     "references": ["Source/Core/SessionDelegate.swift:228"]},
    # ---- Scala: scopt ----------------------------------------------------------------
    {"repo": "scopt", "name": "DefaultOParserSetup", "qualified_name": "DefaultOParserSetup",
     "category": "distinctive", "definition": f"{_SC}/OParserSetup.scala:16",
     "rule": "the abstract class: `new DefaultOParserSetup ...` and a type annotation",
     "references": [f"{_SC}/OParser.scala:279:call", f"{_SC}/OptionParser.scala:78:call"]},
    {"repo": "scopt", "name": "renderUsage", "qualified_name": "ORunner.renderUsage",
     "category": "distinctive", "definition": f"{_SC}/ORunner.scala:12",
     "rule": "`ORunner.renderUsage(...)` (one with type arguments `[C]`)",
     "references": [f"{_SC}/OParser.scala:267:call", f"{_SC}/OptionParser.scala:81",
                    f"{_SC}/ORunner.scala:223"]},
    {"repo": "scopt", "name": "checkConfig", "qualified_name": "OptionParser.checkConfig",
     "category": "common", "definition": f"{_SC}/OptionParser.scala:147",
     "rule": "bare calls in the bodies of anonymous `new scopt.OptionParser[Config](...) "
             "{ ... }` subclasses; OParserBuilder.checkConfig (`import builder._`) is another "
             "method; Scaladoc examples are comments",
     "references": ["shared/src/test/scala/scopttest/ImmutableParserSpec.scala:618:call",
                    *_lines("shared/src/test/scala/scopttest/ImmutableParserSpec.scala", 719, 792,
                            881)]},  # (618: `checkConfig { c => .. }`, a block argument)
    {"repo": "scopt", "name": "checkConfig", "qualified_name": "OParserBuilder.checkConfig",
     "category": "common", "definition": f"{_SC}/OParser.scala:43",
     "rule": "a bare call after `import builder._` (`builder = OParser.builder[Config]`)",
     "references": ["jvm/src/test/scala/scopt/MonadicParserSpecJVM.scala:95"]},
    # ---- Lua: lazy.nvim --------------------------------------------------------------
    {"repo": "lazy.nvim", "name": "norm", "qualified_name": "M.norm", "category": "common",
     "definition": "lua/lazy/core/util.lua:74",
     "rule": "`Util.norm(...)` where Util is `require(\"lazy.core.util\")` or "
             "`require(\"lazy.util\")` (whose table inherits lazy.core.util through "
             "`setmetatable({}, { __index = require(\"lazy.core.util\") })`, as its "
             "`---@class LazyUtil: LazyUtilCore` says); M.normname is another name",
     "references": ["lua/lazy/help.lua:20", *_lines("lua/lazy/view/render.lua", 315, 321, 333),
                    *_lines("lua/lazy/core/meta.lua", 217, 219, 231),
                    *_lines("lua/lazy/core/config.lua", 286, 288, 290, 291, 300),
                    "lua/lazy/core/loader.lua:473", "lua/lazy/pkg/packspec.lua:14",
                    "lua/lazy/pkg/lazy.lua:10", "lua/lazy/pkg/rockspec.lua:57",
                    *_lines("tests/helpers.lua", 8, 17, 26), "tests/core/init_spec.lua:6"]},
    {"repo": "lazy.nvim", "name": "startup", "qualified_name": "M.startup",
     "category": "distinctive", "definition": "lua/lazy/core/loader.lua:100",
     "rule": "`Loader.startup()` (Loader = require(\"lazy.core.loader\")); the \"startup\" "
             "string and comments are not",
     "references": ["lua/lazy/init.lua:112"]},
    {"repo": "lazy.nvim", "name": "packadd", "qualified_name": "M.packadd",
     "category": "distinctive", "definition": "lua/lazy/core/loader.lua:424",
     "rule": "`M.packadd(...)` in the loader module itself",
     "references": _lines("lua/lazy/core/loader.lua", 139, 359)},
    {"repo": "lazy.nvim", "name": "_load", "qualified_name": "M._load", "category": "common",
     "definition": "lua/lazy/core/handler/cmd.lua:7",
     "rule": "`self:_load(cmd)` in the cmd handler's own methods (`function M:...`); "
             "loader.lua's `M._load` and two local functions `_load` are other names",
     "references": _lines("lua/lazy/core/handler/cmd.lua", 34, 54)},
    {"repo": "lazy.nvim", "name": "_load", "qualified_name": "M._load", "category": "common",
     "definition": "lua/lazy/core/loader.lua:313",
     "rule": "`M._load(...)` in loader.lua",
     "references": ["lua/lazy/core/loader.lua:197"]},
    # ---- Elixir: plug ----------------------------------------------------------------
    {"repo": "plug", "name": "put_private", "qualified_name": "Plug.Conn.put_private",
     "category": "common", "definition": "lib/plug/conn.ex:370",
     "rule": "calls of Plug.Conn.put_private/3: bare (in Plug.Conn, or after `import "
             "Plug.Conn`), piped, `Conn.put_private` (alias) and in full; the `@spec` and "
             "the `iex>` doc examples are not calls",
     "references": [*_lines("test/plug/csrf_protection_test.exs", 395, 402, 409),
                    "test/plug/conn_test.exs:92", "lib/plug/router.ex:520",
                    *_lines("lib/plug/session.ex", 69, 86, 87),
                    *_lines("lib/plug/test.ex", 301, 302),
                    *_lines("lib/plug/conn.ex", 1848, 1849, 1850)]},
    {"repo": "plug", "name": "halt", "qualified_name": "Plug.Conn.halt", "category": "common",
     "definition": "lib/plug/conn.ex:1892",
     "rule": "calls of halt/1 where Plug.Conn is imported (`|> halt` without parentheses "
             "too); the examples inside @moduledoc strings (builder.ex:123, "
             "basic_auth.ex:67) and `{:halt, conn}` are not",
     "references": ["test/plug/logger_test.exs:40", "test/plug/conn_test.exs:1484",
                    "test/plug/builder_test.exs:60:call", "lib/plug/basic_auth.ex:108",
                    *_lines("lib/plug/static.ex", 281, 333, 340), "lib/plug/debugger.ex:263",
                    "lib/plug/ssl.ex:469:call"]},
    {"repo": "plug", "name": "run_before_send", "qualified_name": "Plug.Conn.run_before_send",
     "category": "distinctive", "definition": "lib/plug/conn.ex:1912",
     "rule": "the private function's calls in Plug.Conn; the error message string is not",
     "references": _lines("lib/plug/conn.ex", 444, 495, 526)},
    {"repo": "plug", "name": "decode", "qualified_name": "Plug.Conn.Query.decode",
     "category": "common", "definition": "lib/plug/conn/query.ex:107",
     "rule": "Plug.Conn.Query.decode (one function with default arguments): bare after "
             "`import Plug.Conn.Query` and `Plug.Conn.Query.decode(...)`; Cookies.decode, "
             "URI.decode, the JSON parser's and the session cookie's private decode are "
             "other functions; `iex>` examples are docs",
     "references": [*_lines("test/plug/conn/query_test.exs", 9, 13, 18, 21, 22, 23, 24, 26, 27,
                            28, 29, 31, 35, 36, 37, 38, 40, 41, 45, 49, 53, 54, 55, 56, 61),
                    "lib/plug/parsers/urlencoded.ex:36", "lib/plug/conn.ex:1119",
                    *_lines("lib/plug/adapters/test/conn.ex", 188, 205)]},
]


def build(work: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {lang: [] for lang in LANGUAGES}
    roots: dict[str, Path] = {}
    for t in TARGETS:
        pin = pin_named(t["repo"])
        root = roots.setdefault(pin.name, fetch(pin, work))
        out[pin.language].append(gold_record(t, pin, root))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK,
                    help=f"corpus folder (git mirrors from {DEFAULT_MIRRORS})")
    args = ap.parse_args()
    write_gold(build(args.work))


if __name__ == "__main__":
    main()
