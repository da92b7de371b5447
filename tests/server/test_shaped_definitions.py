"""Definitions first without a symbol table, end to end with the real model: Dart is
chunked without symbols, so a query naming a Dart method exactly (`wasParsed`) ranks
first the file whose line declares it (`bool wasParsed(String name) {`, found by the
lexical leg), not the tests and the parser that call it more often."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

ARG_RESULTS = """/// The results of parsing a series of command line arguments.
class ArgResults {
  final Map<String, Object?> _parsed;

  ArgResults(this._parsed);

  /// The remaining arguments that were not parsed as options or flags.
  final List<String> rest = [];

  /// Whether the option with [name] was parsed from the command line.
  bool wasParsed(String name) {
    return _parsed.containsKey(name);
  }
}
"""

PARSER = """/// Parses the arguments into options, flags and the rest.
class Parser {
  void check(ArgResults results, String name) {
    if (!results.wasParsed(name)) {
      throw StateError('was not parsed: $name');
    }
    // wasParsed is asked for every mandatory option: wasParsed(name) decides
    final parsedAlready = results.wasParsed(name);
    print(parsedAlready);
  }
}
"""

TESTS = """void main() {
  group('.wasParsed()', () {
    test('wasParsed returns true for parsed options', () {
      expect(results.wasParsed('fast'), isTrue);
      expect(results.wasParsed('verbose'), isFalse);
      expect(() => results.wasParsed('unknown'), throwsArgumentError);
    });
  });
}
"""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            real_embedder: SentenceTransformerEmbedder) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("shaped")
    root = RepoBuilder(base / "args")
    root.write("lib/src/arg_results.dart", ARG_RESULTS)
    root.write("lib/src/parser.dart", PARSER)
    root.write("test/args_test.dart", TESTS)
    root.write("README.md", "# args\n\nCall `wasParsed()` to know whether an option was "
                            "parsed: wasParsed returns a bool.\n")
    svc = Service(load_settings({"home": str(base / "home")}), embedder=real_embedder)
    svc.index(root.root)
    yield svc
    svc.close()


def test_a_dart_method_named_exactly_ranks_the_file_declaring_it_first(
        service: Service) -> None:
    found = [h.path for h in service.search("wasParsed", mode="hybrid", limit=10).results]
    assert found[0] == "lib/src/arg_results.dart", found
