"""Exact strings and numbers, filters and small things (issue 29, items 3 and 5), end to
end with the real model on a real-format tree: a Python web framework (its routing module
raises "There was an error parsing the body"; English tutorial pages about request bodies
and their German and Portuguese translations), a JavaScript HTTP client whose `dist/`
holds its rollup bundles and a source map, a numbered copy of a helper folder (`lib2/`),
a benchmark CSV, status-code constants and a changelog.

- A pasted error message, quoted or not, ranks the file holding it first in the default
  mode; numbers and versions are keyword terms; lexical search ranks the source of a
  phrase above its bundles and a file holding the words near each other first.
- `--lang js` means JavaScript in every mode, and a misspelt language is an error that
  lists the valid names; `symbols NAME` lists the exact definitions and counts the
  similar names; an identical copy answers as the original."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.indexer.errors import ValidationError
from ctxd.server.cli import render
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

pytestmark = pytest.mark.model

ROUTING = '''"""Routes: turn a request into the endpoint's arguments and its return value into a
response."""

import email.message
import json
from typing import Any, Callable

from starlite.exceptions import HTTPException, RequestValidationError
from starlite.encoders import jsonable_encoder


async def serialize_response(*, field: Any = None, response_content: Any,
                             exclude_unset: bool = False) -> Any:
    """Validate the endpoint's return value against the response model and encode it."""
    if field is None:
        return jsonable_encoder(response_content)
    value, errors = field.validate(response_content, {}, loc=("response",))
    if errors:
        raise ValueError(errors)
    return jsonable_encoder(value, exclude_unset=exclude_unset)


async def run_endpoint_function(*, dependant: Any, values: dict[str, Any],
                                is_coroutine: bool) -> Any:
    """Call the endpoint with its solved arguments, in a thread when it is not async."""
    if is_coroutine:
        return await dependant.call(**values)
    return await run_in_threadpool(dependant.call, **values)


def get_request_handler(dependant: Any, body_field: Any = None,
                        status_code: int | None = None) -> Callable[[Any], Any]:
    """Build the ASGI handler of one route: read and decode the request body, solve the
    dependencies, call the endpoint and serialize what it returns."""
    is_body_form = body_field is not None and body_field.is_form

    async def app(request: Any) -> Any:
        body: Any = None
        try:
            if body_field:
                if is_body_form:
                    body = await request.form()
                else:
                    body_bytes = await request.body()
                    if body_bytes:
                        json_body: Any = None
                        content_type_value = request.headers.get("content-type")
                        if not content_type_value:
                            json_body = await request.json()
                        else:
                            message = email.message.Message()
                            message["content-type"] = content_type_value
                            if message.get_content_maintype() == "application":
                                subtype = message.get_content_subtype()
                                if subtype == "json" or subtype.endswith("+json"):
                                    json_body = await request.json()
                        body = json_body if json_body is not None else body_bytes
        except json.JSONDecodeError as e:
            validation_error = RequestValidationError(
                [{"type": "json_invalid", "loc": ("body", e.pos), "msg": "JSON decode error",
                  "input": {}, "ctx": {"error": e.msg}}], body=e.doc)
            raise validation_error from e
        except HTTPException:
            raise
        except Exception as e:
            http_error = HTTPException(
                status_code=400, detail="There was an error parsing the body"
            )
            raise http_error from e
        values, errors = await solve_dependencies(request=request, dependant=dependant,
                                                  body=body)
        if errors:
            raise RequestValidationError(errors, body=body)
        raw_response = await run_endpoint_function(dependant=dependant, values=values,
                                                   is_coroutine=True)
        return await serialize_response(response_content=raw_response)

    return app


async def solve_dependencies(*, request: Any, dependant: Any, body: Any
                             ) -> tuple[dict[str, Any], list[Any]]:
    """Resolve the endpoint's parameters from the path, query, headers, cookies and body."""
    values: dict[str, Any] = {}
    errors: list[Any] = []
    for param in dependant.params:
        value = request.path_params.get(param.name, request.query_params.get(param.name))
        if value is None and param.required:
            errors.append({"loc": ("query", param.name), "msg": "field required"})
        values[param.name] = value
    if dependant.body_param is not None:
        values[dependant.body_param] = body
    return values, errors


async def run_in_threadpool(func: Callable[..., Any], **kwargs: Any) -> Any:
    """Run a blocking function in the worker threads."""
    return func(**kwargs)
'''

EXCEPTIONS = '''"""The errors an application raises and the framework turns into responses."""

from typing import Any


class HTTPException(Exception):
    """An error with an HTTP status code and a detail sent to the client as JSON."""

    def __init__(self, status_code: int, detail: Any = None) -> None:
        self.status_code = status_code
        self.detail = detail


class RequestValidationError(Exception):
    """The request's parameters or body do not match what the endpoint declares."""

    def __init__(self, errors: list[Any], *, body: Any = None) -> None:
        self.errors = errors
        self.body = body
'''

STATUS = '''"""HTTP status codes as named constants."""

HTTP_200_OK = 200
HTTP_201_CREATED = 201
HTTP_400_BAD_REQUEST = 400
HTTP_404_NOT_FOUND = 404
HTTP_422_UNPROCESSABLE_ENTITY = 422
HTTP_500_INTERNAL_SERVER_ERROR = 500
'''

PAGINATION = '''"""Paging through long result lists."""

MAX_PAGE_SIZE = 1000


def clamp_page_size(size: int) -> int:
    """A page size between 1 and the largest page the API serves."""
    return max(1, min(size, MAX_PAGE_SIZE))
'''

BODY_DOC = """# Request Body

When you need to send data from a client (let's say, a browser) to your API, you send it
as a **request body**. A request body is data sent by the client to your API. A response
body is the data your API sends to the client.

Your API almost always has to send a response body. But clients don't necessarily need
to send request bodies all the time, sometimes they only request a path, maybe with some
query parameters, but don't send a body.

To declare a request body, you use models, with all their power and benefits.

## Import the model

First, you need to import `BaseModel`. Then you declare your data model as a class that
inherits from `BaseModel`, and use standard Python types for all the attributes.

## Declare it as a parameter

To add it to your path operation, declare it the same way you declared path and query
parameters. With just that Python type declaration, the framework will read the body of
the request as JSON, convert the corresponding types (if needed) and validate the data.

If the data is invalid, it will return a nice and clear error, indicating exactly where
and what was the incorrect data. When the client sends something that is not JSON at all,
the framework answers with a 400 and a short message, instead of a validation error.

## Results

Parsing happens before your function runs: by the time it is called, the body is already
an instance of your model, and your editor gives you completion for its attributes.
"""

ERRORS_DOC = """# Handling Errors

There are many situations in which you need to notify an error to a client that is using
your API. You could need to tell the client that the client doesn't have enough
privileges, that it doesn't have access to a resource, or that the item it was trying to
access doesn't exist. In these cases, you would normally return an HTTP status code in the
range of 400.

## Raise an exception

To return HTTP responses with errors to the client you raise an exception with a status
code and a detail. When the body of a request cannot be read, for example because a
client sent broken JSON, the framework raises the exception for you before it goes
any further, and the client receives the detail in the response body.

## Override the default handlers

You can override the default exception handlers with your own, for example to return
plain text instead of JSON for validation errors or for errors parsing the request.
"""

BODY_DE = """# Requestbody

Wenn Sie Daten von einem Client (sagen wir, einem Browser) zu Ihrer API senden, dann
senden Sie diese als einen **Requestbody** (Deutsch: Anfragekörper). Ein Requestbody sind
Daten, die vom Client zu Ihrer API gesendet werden. Wenn der Body nicht gelesen werden
kann (There was an error parsing the body, sagt die Antwort dann), erhalten Sie einen
Fehler 400, bevor Ihre Funktion läuft.

## Importieren Sie das Modell

Zuerst müssen Sie `BaseModel` importieren und Ihr Datenmodell als Klasse deklarieren.
"""

BODY_PT = """# Corpo da Requisição

Quando você precisa enviar dados de um cliente (como de um navegador) para sua API, você
os envia como um **corpo da requisição**. Se o corpo não puder ser lido, a resposta diz
"There was an error parsing the body" e o código de status é 400, antes que a sua função
seja executada.

## Importe o modelo

Primeiro, você precisa importar `BaseModel` e declarar seu modelo de dados como uma classe.
"""

SETTLE = """import FetchyError from './FetchyError.js';

/**
 * Resolve or reject a Promise based on response status.
 *
 * @param {Function} resolve A function that resolves the promise.
 * @param {Function} reject A function that rejects the promise.
 * @param {object} response The response.
 */
export default function settle(resolve, reject, response) {
  const validateStatus = response.config.validateStatus;
  if (!response.status || !validateStatus || validateStatus(response.status)) {
    resolve(response);
  } else {
    reject(new FetchyError(
      'Request failed with status code ' + response.status,
      [FetchyError.ERR_BAD_REQUEST,
       FetchyError.ERR_BAD_RESPONSE][Math.floor(response.status / 100) - 4],
      response.config,
      response.request,
      response
    ));
  }
}
"""

SETTLE_ALL = """/**
 * Wait for every promise and report each outcome, fulfilled or rejected.
 */
export function settleAll(promises) {
  return Promise.allSettled(promises);
}

export function settledValues(results) {
  return results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
}

export function isSettled(state) {
  return state === 'fulfilled' || state === 'rejected';
}
"""

FETCHY_ERROR = """/**
 * An error of a request: its message, a code, the config and the response if any.
 */
export default class FetchyError extends Error {
  constructor(message, code, config, request, response) {
    super(message);
    this.name = 'FetchyError';
    this.code = code;
    this.config = config;
    this.request = request;
    this.response = response;
  }
}

FetchyError.ERR_BAD_REQUEST = 'ERR_BAD_REQUEST';
FetchyError.ERR_BAD_RESPONSE = 'ERR_BAD_RESPONSE';
"""

COMBINE = """/**
 * Creates a new URL by combining the specified URLs
 *
 * @param {string} baseURL The base URL
 * @param {string} relativeURL The relative URL
 *
 * @returns {string} The combined URL
 */
export default function combineURLs(baseURL, relativeURL) {
  return relativeURL
    ? baseURL.replace(/\\/?\\/$/, '') + '/' + relativeURL.replace(/^\\/+/, '')
    : baseURL;
}
"""

XHR = """import settle from '../core/settle.js';

/**
 * The browser adapter: sends the request with XMLHttpRequest.
 */
export default function xhrAdapter(config) {
  return new Promise(function dispatchXhrRequest(resolve, reject) {
    const request = new XMLHttpRequest();
    request.open(config.method.toUpperCase(), config.url, true);
    request.timeout = config.timeout;

    function onloadend() {
      const response = {
        data: request.response,
        headers: request.getAllResponseHeaders(),
        config,
        request
      };
      settle(resolve, reject, response);
    }

    request.onloadend = onloadend;
    request.onabort = function handleAbort() {
      reject(new Error('Request aborted'));
    };
    request.send(config.data || null);
  });
}
"""


def bundle(banner: str, sources: list[str]) -> str:
    body = "\n".join(s.replace("export default ", "").replace("export ", "")
                     .replace("import FetchyError from './FetchyError.js';\n", "")
                     .replace("import settle from '../core/settle.js';\n", "")
                     for s in sources)
    return banner + "(function (global, factory) {\n  'use strict';\n" + body + "\n}));\n"


def tree(root: RepoBuilder) -> RepoBuilder:
    root.write("pyproject.toml", '[project]\nname = "starlite"\nversion = "3.1.0"\n')
    root.write("starlite/__init__.py", '"""Starlite: a small web framework."""\n')
    root.write("starlite/routing.py", ROUTING)
    root.write("starlite/exceptions.py", EXCEPTIONS)
    root.write("starlite/status.py", STATUS)
    root.write("starlite/pagination.py", PAGINATION)
    root.write("docs/en/docs/tutorial/body.md", BODY_DOC)
    root.write("docs/en/docs/tutorial/handling-errors.md", ERRORS_DOC)
    root.write("docs/de/docs/tutorial/body.md", BODY_DE)
    root.write("docs/pt/docs/tutorial/body.md", BODY_PT)
    root.write("CHANGELOG.md", "# Changelog\n\n## 3.1.0\n\n- Pages hold up to 1000 items.\n")
    root.write("package.json", json.dumps({
        "name": "fetchy", "version": "1.7.2", "main": "dist/node/fetchy.cjs",
        "module": "dist/esm/fetchy.js", "browser": "dist/browser/fetchy.cjs"}, indent=2))
    lib = {"lib/core/settle.js": SETTLE, "lib/core/FetchyError.js": FETCHY_ERROR,
           "lib/core/settleAll.js": SETTLE_ALL, "lib/adapters/xhr.js": XHR,
           "lib/helpers/combineURLs.js": COMBINE}
    for rel, text in lib.items():
        root.write(rel, text)
    root.write("lib2/combineURLs.js", COMBINE)  # a numbered copy of the helpers folder
    banner = "/*! Fetchy v1.7.2 Copyright (c) 2026 The Fetchy authors */\n"
    sources = list(lib.values())
    for rel in ("dist/fetchy.js", "dist/esm/fetchy.js", "dist/node/fetchy.cjs",
                "dist/browser/fetchy.cjs"):
        root.write(rel, bundle(banner, sources))
    root.write("dist/fetchy.js.map", json.dumps({
        "version": 3, "file": "fetchy.js", "sources": list(lib),
        "sourcesContent": sources, "mappings": "AAAA;AACA"}))
    root.write("benchmarks/status_codes.csv", "code,count\n" + "".join(
        f"{c},{i * 7}\n" for i, c in enumerate([200, 201, 301, 404, 422, 500] * 40)))
    return root


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory,
            real_embedder: SentenceTransformerEmbedder) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("issue29b")
    root = tree(RepoBuilder(base / "project")).root
    svc = Service(load_settings({"home": str(base / "home")}), embedder=real_embedder)
    svc.index(root)
    yield svc
    svc.close()


def paths(service: Service, query: str, mode: str = "hybrid", **kw: object) -> list[str]:
    return [h.path for h in service.search(query, mode=mode, limit=10, **kw).results]


# -- item 3: exact strings and numbers ---------------------------------------------------


@pytest.mark.parametrize("query", [
    "There was an error parsing the body",
    '"There was an error parsing the body"',
    "There was an error parsing the body.",
])
def test_a_pasted_error_message_ranks_its_source_first(service: Service, query: str) -> None:
    found = paths(service, query)
    assert found[0] == "starlite/routing.py", found


def test_a_message_with_a_value_filled_in_ranks_its_source_first(service: Service) -> None:
    found = paths(service, "Request failed with status code 404")
    assert found[0] == "lib/core/settle.js", found
    assert not [p for p in found if p.startswith("dist/")], found


def test_a_question_is_not_taken_for_a_phrase(service: Service) -> None:
    """A question occurs verbatim nowhere: the ranking is the legs' own."""
    found = paths(service, "how do I declare a request body model")
    assert found[0] == "docs/en/docs/tutorial/body.md", found


@pytest.mark.parametrize(("query", "holder"), [
    ("404", "starlite/status.py"), ("422", "starlite/status.py"),
    ("3.1.0", "CHANGELOG.md"), ("1000", "starlite/pagination.py"),
])
def test_keyword_search_finds_numbers_and_versions(service: Service, query: str,
                                                   holder: str) -> None:
    found = paths(service, query, mode="keyword")
    assert holder in found, (query, found)


@pytest.mark.parametrize("query", ['"Request failed with status code"',
                                   "Request failed with status code"])
def test_lexical_search_ranks_the_source_of_a_phrase_above_its_bundles(
        service: Service, query: str) -> None:
    found = paths(service, query, mode="lexical")
    assert found[0] == "lib/core/settle.js", found
    assert {p for p in found if p.startswith("dist/")}, found  # still greppable


def test_lexical_words_near_each_other_rank_first(service: Service) -> None:
    """`error parsing body`, unquoted, ANDs the words: the English pages hold all three
    far apart (and sort first by path), the routing module on one line (and the
    translations, which quote the message)."""
    found = paths(service, "error parsing body", mode="lexical")
    far = ("docs/en/docs/tutorial/body.md", "docs/en/docs/tutorial/handling-errors.md")
    assert set(far) <= set(found), found
    assert all(found.index("starlite/routing.py") < found.index(p) for p in far), found


# -- item 5: filters and small things ----------------------------------------------------


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword", "lexical"])
def test_lang_means_the_same_in_every_mode(service: Service, mode: str) -> None:
    found = paths(service, "settle", mode=mode, language="js")
    assert found and found[0] in ("lib/core/settle.js", "lib/core/settleAll.js"), (mode, found)
    assert "lib/core/settle.js" in found, (mode, found)
    assert all(p.endswith((".js", ".cjs")) for p in found), (mode, found)


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword", "lexical"])
def test_a_misspelt_language_is_an_error_naming_the_valid_ones(service: Service,
                                                               mode: str) -> None:
    with pytest.raises(ValidationError) as err:
        service.search("settle", mode=mode, language="javscript")
    assert err.value.details["field"] == "language"
    assert err.value.details["value"] == "javscript"
    assert "javascript" in err.value.details["allowed"]
    assert "'javascript'" in (err.value.hint or "")


def test_symbols_with_an_exact_hit_count_the_similar_names(service: Service) -> None:
    page = service.symbols("settle")
    assert page.best_match == "exact" and page.exact == 1
    text = render.symbol_page_text(page, lambda _repo, path: path)
    lines = text.splitlines()
    assert lines[0].split() == ["function", "settle", "lib/core/settle.js:10"], text
    assert "settleAll" not in text and "isSettled" not in text, text
    assert f"{page.total - 1} similar names" in lines[-1] and "--similar" in lines[-1], text
    full = render.symbol_page_text(page, lambda _repo, path: path, similar=True)
    assert "settleAll" in full
    data = render.symbol_page_json(page)
    assert data["exact"] == 1 and data["similar"] == page.total - 1 >= 2
    assert data["items"][0]["name"] == "settle"


def test_an_identical_copy_answers_as_the_original(service: Service) -> None:
    hits = service.search("combine a base URL with a relative URL", limit=5).results
    combined = [h for h in hits if h.path.endswith("combineURLs.js")]
    assert combined and combined[0].path == "lib/helpers/combineURLs.js", [
        (h.path, [c.path for c in h.also_in]) for h in hits]
    assert "lib2/combineURLs.js" in [c.path for c in combined[0].also_in]
