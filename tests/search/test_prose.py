# ruff: noqa: RUF001  (questions in Japanese: full-width punctuation)
"""Code over prose (`search.prose.code_first`) and questions in a translation's language
(`search.translations`), on hits as hybrid fusion gives them (issue 29)."""

from __future__ import annotations

import pytest

from ctxd.search.models import Hit, LineMatch, MatchSource
from ctxd.search.prose import code_first
from ctxd.search.questions import wants_prose
from ctxd.search.translations import lexical_terms, own_language_pages, query_language


def hit(path: str, score: float, symbol: str | None = None, text: str = "") -> Hit:
    return Hit(repository="r", path=path, language="", start_line=1, end_line=1, score=score,
               sources=(MatchSource.SEMANTIC,), symbol=symbol, snippet=text)


@pytest.mark.parametrize("query,prose", [
    ("how are datetime values converted to JSON", False),
    ("where are datetime values converted to JSON", False),
    ("which function decides whether a session expired", False),
    ("how do I convert a datetime to JSON?", True),
    ("tutorial on query parameters", True),
    ("example of enabling CORS", False),
    ("Wie wandle ich datetime-Werte in JSON-kompatible Daten um?", True),
    ("パスパラメータの型を宣言するには？", True),
])
def test_what_the_question_asks_for(query: str, prose: bool) -> None:
    assert wants_prose(query) is prose


PAGE = "Use `jsonable_encoder()` to convert a datetime to a str in ISO format."


def test_the_page_goes_right_after_the_code_it_names() -> None:
    hits = [hit("docs/encoder.md", 1.0, text=PAGE), hit("docs/other.md", 0.75, text="hello"),
            hit("pkg/routing.py", 0.85, "run_endpoint"),
            hit("pkg/encoders.py", 0.8, "jsonable_encoder")]
    ranked = [h.path for h in code_first("how are datetime values converted", hits)]
    assert ranked == ["pkg/routing.py", "pkg/encoders.py", "docs/encoder.md", "docs/other.md"]
    # a page far closer to the question than the code it names keeps its lead
    far = [hit("docs/encoder.md", 1.0, text=PAGE), hit("pkg/encoders.py", 0.5, "jsonable_encoder")]
    assert code_first("how are datetime values converted", far)[0].path == "docs/encoder.md"
    # a usage question keeps the page first
    asked = code_first("how do I convert a datetime?", hits)
    assert asked[0].path == "docs/encoder.md"


def test_the_page_goes_after_anonymous_code_that_reads_the_options_it_names() -> None:
    """JavaScript's `export default (config) => ...` has no name: the page that names the
    options it reads (`xsrfCookieName`) describes it all the same."""
    page = "`xsrfCookieName` is the name of the cookie to use as a value for the xsrf token"
    code = ("let {data, withXSRFToken, xsrfHeaderName, xsrfCookieName} = newConfig;\n"
            "const xsrfValue = cookies.read(xsrfCookieName);")
    hits = [hit("README.md", 1.6, text=page), hit("lib/helpers/resolveConfig.js", 1.2, text=code),
            hit("lib/helpers/cookies.js", 1.0, "write", text="document.cookie = cookie;")]
    ranked = [h.path for h in code_first("how is the XSRF token read from a cookie", hits)]
    assert ranked == ["lib/helpers/resolveConfig.js", "README.md", "lib/helpers/cookies.js"]
    # a word shared in any form is no sign: plain words and dunders are not identifiers
    plain = [hit("README.md", 1.6, text="the __init__ of the cookie value"),
             hit("lib/a.py", 1.2, text="def __init__(self): self.cookie = value")]
    assert code_first("how is the cookie read", plain)[0].path == "README.md"


def test_a_page_below_the_code_it_names_still_yields_to_other_code() -> None:
    """Naming the best code hit does not exempt a page from the factor: it goes below
    code it scores barely above (ky: the readme naming `Hooks` against `core/Ky.ts`)."""
    hits = [hit("source/types/hooks.ts", 1.0, "Hooks"),
            hit("readme.md", 0.9, text="Pass `Hooks` to run functions before a request"),
            hit("source/core/Ky.ts", 0.85, "Ky.constructor")]
    ranked = [h.path for h in code_first("how are hooks run before a request", hits)]
    assert ranked == ["source/types/hooks.ts", "source/core/Ky.ts", "readme.md"]


def test_prose_is_held_to_a_share_of_the_top_10_and_scores_stay_ordered() -> None:
    hits = [hit(f"docs/p{i}.md", 1.0 - i / 100, text="words") for i in range(8)]
    hits += [hit(f"pkg/m{i}.py", 0.8 - i / 100, f"f{i}") for i in range(8)]
    ranked = code_first("how is the cache invalidated", hits, max_prose_top=3)
    assert sum(h.path.endswith(".md") for h in ranked[:10]) == 3
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)


def test_prose_keeps_its_place_when_no_code_answers() -> None:
    hits = [hit("docs/a.md", 1.0, text="words"), hit("docs/b.md", 0.9, text="words"),
            hit("pkg/m.py", 0.3, "f")]
    assert [h.path for h in code_first("how is the cache invalidated", hits)][:2] == [
        "docs/a.md", "docs/b.md"]


def test_a_question_in_german_finds_the_german_page_by_its_words() -> None:
    q = "Wie deklariere ich Query-Parameter mit Standardwerten?"
    assert query_language(q) == "de"
    assert query_language("how are query parameters with defaults declared?") is None
    assert lexical_terms("パスパラメータの型を宣言するには？") == ["パスパラメータ", "宣言", "型"]
    page = Hit(repository="r", path="docs/de/query.md", language="", start_line=3, end_line=3,
               score=5.0, sources=(MatchSource.LEXICAL,), snippet="Query-Parameter",
               matches=(LineMatch(3, "Query-Parameter mit Standardwerten deklarieren"),))
    ranked = own_language_pages([hit("pkg/params.py", 0.8, "Query")], [page], q)
    assert max(ranked, key=lambda h: h.score).path == "docs/de/query.md"


def test_code_in_folders_of_examples_counts_in_the_share_of_illustrations() -> None:
    """A behaviour question quoting a sample (`/items/{item_id}`) draws the samples that
    hold it: they share the bound with the pages, so the code that does it stays in the
    top 5; a question asking for an example keeps them."""
    hits = [hit(f"docs/p{i}.md", 1.4 - i / 100, text="words") for i in range(3)]
    hits += [hit("pkg/params.py", 1.3, "Path")]
    hits += [hit(f"docs_src/t{i}/main.py", 0.95 - i / 100, "read_item") for i in range(4)]
    hits += [hit("pkg/utils.py", 0.87, "get_path_param_names")]
    q = "how are the parameter names extracted from a path template like /items/{item_id}"
    ranked = [h.path for h in code_first(q, hits)]
    assert ranked.index("pkg/utils.py") < 5
    assert ranked[:5] == ["pkg/params.py", "docs/p0.md", "docs/p1.md", "docs/p2.md",
                          "pkg/utils.py"]
    asked = [h.path for h in code_first("an example of reading a path parameter", hits)]
    assert asked.index("pkg/utils.py") > 5  # the question names examples: they keep their place


def test_a_task_keeps_its_guide_page_first() -> None:
    """"Return a 404 ..." is a user's task as often as a behaviour: the guide page that
    names `HTTPException` is not put after the code that defines it."""
    page = "Raise an `HTTPException` with a `status_code` of 404 when the item is missing."
    hits = [hit("docs/handling-errors.md", 1.67, text=page),
            hit("pkg/exceptions.py", 1.48, "HTTPException")]
    assert code_first("return a 404 error to the client when an item does not exist",
                      hits)[0].path == "docs/handling-errors.md"
    assert code_first("how is the 404 response for a missing item built",
                      hits)[0].path == "pkg/exceptions.py"
