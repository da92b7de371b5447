"""Issue 42's hard rules, end to end with the real model on a small library whose helpers
live in modules named like tests (Werkzeug's `test.py`, a `testing.py`, a `conftest.py`
plugin that library code imports):

- a query naming an identifier exactly ranks its definition first, whatever the file's
  role, unless the user's filters leave that file out;
- a quoted phrase written verbatim in a few files ranks those first (the source before
  the page that quotes it);
- a translated page never answers an English question, identifier queries included."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

TEST_PY = '''"""Helpers to test applications: build a WSGI environment and call the app."""


class EnvironBuilder:
    """Builds a WSGI environment from request values."""

    def __init__(self, path="/", method="GET", headers=None, data=None):
        self.path = path
        self.method = method
        self.headers = headers or {}
        self.data = data

    def get_environ(self):
        """The WSGI environment for the request values."""
        return {"PATH_INFO": self.path, "REQUEST_METHOD": self.method}


def run_wsgi_app(app, environ):
    """Call the application and return its body."""
    return b"".join(app(environ, lambda status, headers: None))
'''

TESTING_PY = '''"""Testing helpers that the command runner uses too."""


class CliRunner:
    """Invokes a command in isolation and captures its output."""

    def invoke(self, command, args=(), catch_exceptions=True):
        """Run `command` with `args`, returning its captured output."""
        try:
            return command(*args)
        except Exception:
            if not catch_exceptions:
                raise
            return None
'''

CONFTEST_PY = '''"""A pytest plugin shipped with the library: its fixtures build app clients."""


def make_app_client(app, base_url="http://localhost"):
    """A client bound to `app`, for tests and for the library's shell."""
    return (app, base_url)
'''

WRAPPERS_PY = '''"""Request and response wrappers built on WSGI environments."""
from werk.test import EnvironBuilder, run_wsgi_app


class Request:
    """A request made from a WSGI environment: EnvironBuilder makes one from values."""

    @classmethod
    def from_values(cls, *args, **kwargs):
        """Build a request from values with EnvironBuilder and its get_environ."""
        builder = EnvironBuilder(*args, **kwargs)
        return cls(builder.get_environ())

    def __init__(self, environ):
        self.environ = environ


def call_app(app, **values):
    """EnvironBuilder(values).get_environ() then run_wsgi_app: one request through app."""
    builder = EnvironBuilder(**values)
    return run_wsgi_app(app, builder.get_environ())
'''

COMMANDS_PY = '''"""Commands and the runner that invokes them from the shell."""
from werk.testing import CliRunner
from werk.conftest import make_app_client


def shell(app):
    """Open a shell with a client: make_app_client binds one to the app."""
    return make_app_client(app)


def run_command(command, args):
    """Run a command like CliRunner.invoke does, catch_exceptions off."""
    return CliRunner().invoke(command, args, catch_exceptions=False)
'''

GUIDE_MD = '''# Testing your application

Use `EnvironBuilder` to build an environment and call `get_environ` on it. The
`CliRunner` invokes commands; pass `catch_exceptions=False` to see errors. In tests,
`make_app_client` gives a client. The helper raises "environment could not be built"
when the path is empty.
'''

GUIDE_DE_MD = '''# Ihre Anwendung testen

Verwenden Sie `EnvironBuilder`, um eine Umgebung zu bauen, und rufen Sie `get_environ`
auf. Der `CliRunner` ruft Befehle auf; übergeben Sie `catch_exceptions=False`, um die
Fehler zu sehen. In Tests gibt Ihnen `make_app_client` einen Client. Die Hilfe ist für
alle Anwendungen gedacht, die mit dem Server und der Umgebung arbeiten und die Antwort
der Anwendung prüfen wollen, bevor sie ausgeliefert wird.
'''

ERRORS_PY = '''"""Errors raised while building environments."""


class EnvironError(Exception):
    """Raised with "environment could not be built" when the path is empty."""


def check_path(path):
    if not path:
        raise EnvironError("environment could not be built")
'''


STREAMING_RB = '''# Streams a response body to the client as it is written.
module Streaming
  class Stream
    def printf(*args)
      write(format(*args))
    end

    def copy?
      false
    end

    def run!
      @running = true
    end
  end
end
'''

PRINTER_RB = '''# Prints reports: printf formats a row, run the printer to copy the report.
class Printer
  def print_rows(rows)
    rows.each { |row| printf("%s\\n", row) }
  end

  def run
    print_rows(["copy", "printf", "run"])
  end
end
'''


OPTION_TEST_KT = '''package werk

import kotlin.test.Test
import kotlin.test.assertEquals

class OptionTest {
    @Test
    fun `default option`() {
        assertEquals("8080", parse(emptyList()).port)
    }
}
'''

OPTIONS_MD = """# Options

Every option has a default option value: the port's is 8080. A default option can be
overridden on the command line, or from the environment.
"""


def tree(root: RepoBuilder) -> RepoBuilder:
    root.write("werk/__init__.py", '"""A small WSGI toolkit."""\n')
    root.write("werk/test.py", TEST_PY)
    root.write("werk/testing.py", TESTING_PY)
    root.write("werk/conftest.py", CONFTEST_PY)
    root.write("werk/wrappers.py", WRAPPERS_PY)
    root.write("werk/commands.py", COMMANDS_PY)
    root.write("werk/errors.py", ERRORS_PY)
    root.write("docs/en/testing.md", GUIDE_MD)
    root.write("docs/de/testing.md", GUIDE_DE_MD)
    root.write("mkdocs.yml", "site_name: werk\nnav:\n  - testing.md\n")
    root.write("lib/streaming.rb", STREAMING_RB)
    root.write("lib/printer.rb", PRINTER_RB)
    root.write("test/OptionTest.kt", OPTION_TEST_KT)
    root.write("docs/en/options.md", OPTIONS_MD)
    root.write("werk/options.py", '"""Reads a default option from the environment."""\n'
               "PORT = 8080\n")
    return root


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            real_embedder: SentenceTransformerEmbedder) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("issue42")
    root = tree(RepoBuilder(base / "werk-project")).root
    svc = Service(load_settings({"home": str(base / "home")}), embedder=real_embedder)
    svc.index(root)
    yield svc
    svc.close()


def paths(service: Service, query: str, **kw: object) -> list[str]:
    return [h.path for h in service.search(query, mode="hybrid", limit=10, **kw).results]


@pytest.mark.parametrize(("query", "defined_in"), [
    ("EnvironBuilder get_environ", "werk/test.py"),
    ("EnvironBuilder.get_environ", "werk/test.py"),
    ("EnvironBuilder", "werk/test.py"),
    ("run_wsgi_app", "werk/test.py"),
    ("CliRunner invoke catch_exceptions", "werk/testing.py"),
    ("make_app_client", "werk/conftest.py"),
    ("copy?", "lib/streaming.rb"),  # Ruby's predicate and bang names, as written
    ("run!", "lib/streaming.rb"),
    ("Stream printf", "lib/streaming.rb"),  # a member asked with its container
    # a Kotlin name with blanks, also an exact phrase that a guide page writes twice
    ("OptionTest.`default option`", "test/OptionTest.kt"),
])
def test_an_exact_identifier_ranks_its_definition_first_whatever_the_files_role(
        service: Service, query: str, defined_in: str) -> None:
    assert paths(service, query)[0] == defined_in


def test_filters_that_leave_the_definition_out_keep_it_out(service: Service) -> None:
    found = paths(service, "EnvironBuilder get_environ", path_glob="werk/wrappers.py")
    assert found and "werk/test.py" not in found


def test_a_question_naming_an_identifier_is_not_an_identifier_query(service: Service) -> None:
    # "where ... raised" asks for the raise: the rule stays out of a natural question
    # (the ranking is the legs' own; only that the rule did not force its definition).
    from ctxd.search.definitions import applies

    assert not applies("where is EnvironError raised when the path is empty?")
    assert applies("EnvironError check_path")


def test_a_quoted_phrase_found_verbatim_ranks_its_files_first(service: Service) -> None:
    found = paths(service, '"environment could not be built" EnvironBuilder')
    assert found[0] == "werk/errors.py"


@pytest.mark.parametrize("query", [
    "EnvironBuilder get_environ",
    "CliRunner invoke catch_exceptions",
    "how do I test my application with a client",
])
def test_a_translation_never_answers_an_english_question(service: Service, query: str
                                                          ) -> None:
    assert not [p for p in paths(service, query) if p.startswith("docs/de/")]


# -- item 4: explain ----------------------------------------------------------------------


def test_explain_gives_each_hits_features_and_their_contributions(service: Service) -> None:
    page = service.search("EnvironBuilder get_environ", mode="hybrid", limit=5, explain=True)
    rows = page.stats["explain"]
    assert len(rows) == len(page.results) > 1
    first = {p["feature"]: p for p in rows[0]}
    assert first["semantic"]["value"] > 0 and first["semantic"]["kind"] == "add"
    assert first["test or stub"] == {"feature": "test or stub", "value": 0.5, "kind": "factor"}
    assert first["its file defines a name the query names"]["kind"] == "rule"
    plain = service.search("EnvironBuilder get_environ", mode="hybrid", limit=5)
    assert "explain" not in plain.stats
    assert [h.path for h in plain.results] == [h.path for h in page.results]


def test_cli_explain_prints_the_plan_then_each_hits_parts(service: Service) -> None:
    from click.testing import CliRunner

    from ctxd.server.cli.main import main

    home = str(service.settings.home)
    r = CliRunner().invoke(main, ["--home", home, "--no-daemon", "search",
                                  "CliRunner invoke catch_exceptions", "--explain"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "identifier-like query" in r.output
    line = next(x for x in r.output.splitlines() if x.strip().startswith("1. "))
    assert "werk/testing.py" in line and "semantic" in line
    assert "rule: its file defines a name the query names" in line


def test_mcp_semantic_search_explains_each_result_on_request(service: Service) -> None:
    from ctxd.server.mcp.tools import build_server
    from tests.server.conftest import run_client, text

    server = build_server(service)
    args = {"query": "CliRunner invoke catch_exceptions", "limit": 3, "all_repos": True}
    result = run_client(server, lambda c: c.call_tool(
        "semantic_search", {**args, "explain": True}))
    assert not result.is_error, text(result)
    data = result.structured_content
    assert data is not None and len(data["explain"]) == len(data["results"]) > 0
    assert data["results"][0]["path"] == "werk/testing.py"
    assert {"feature": "semantic", "kind": "add"}.items() <= data["explain"][0][0].items()
    assert "### Why each result ranks" in text(result)
    plain = run_client(server, lambda c: c.call_tool("semantic_search", args))
    assert plain.structured_content is not None and "explain" not in plain.structured_content
