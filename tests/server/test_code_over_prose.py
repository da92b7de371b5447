# ruff: noqa: RUF001, E501  (translated text and a bundle: full-width punctuation, long lines)
"""The right kind of file first (issue 29), end to end with the real model, on a tree in the
shape of a docs-heavy Python web framework: the package, its English tutorial, the same
tutorial translated into German, Japanese and Russian (mkdocs `docs/<lang>/`), a
`README.zh-CN.md` beside the README, a CSV of benchmark results and a committed JS bundle.

- Code over prose: a question about behaviour ("how are X converted") ranks the module
  that does it first and the tutorial page that describes it after it; a usage question
  ("how do I ...", a tutorial) ranks the page first.
- Translations are one page: kept greppable, not embedded, named in the index report with
  the key that brings them back; an English question sees none of them in its top 10; a
  question in German or Japanese still finds its page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.indexer.pipeline import IndexStats
from ctxd.server.config import load_settings
from ctxd.server.index_report import not_embedded_line
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

CODE = {
    "jsonkit/encoders.py": '''"""Turn Python values into data the json module can write."""
import dataclasses
import datetime
from decimal import Decimal
from enum import Enum
from typing import Any


def isoformat(o: datetime.date | datetime.time) -> str:
    return o.isoformat()


def decimal_encoder(dec_value: Decimal) -> int | float:
    """Whole decimals become ints, the rest floats."""
    if dec_value.as_tuple().exponent >= 0:
        return int(dec_value)
    return float(dec_value)


ENCODERS_BY_TYPE = {
    datetime.date: isoformat,
    datetime.datetime: isoformat,
    datetime.timedelta: lambda td: td.total_seconds(),
    Decimal: decimal_encoder,
    bytes: lambda b: b.decode(),
    set: list,
    frozenset: list,
}


def jsonable_encoder(obj: Any, exclude_none: bool = False) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable_encoder(dataclasses.asdict(obj), exclude_none=exclude_none)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (str, int, float)) or obj is None:
        return obj
    if isinstance(obj, dict):
        return {jsonable_encoder(k): jsonable_encoder(v, exclude_none=exclude_none)
                for k, v in obj.items() if v is not None or not exclude_none}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable_encoder(v, exclude_none=exclude_none) for v in obj]
    for cls, encoder in ENCODERS_BY_TYPE.items():
        if isinstance(obj, cls):
            return encoder(obj)
    raise ValueError(f"Object of type {type(obj).__name__} cannot be encoded")
''',
    "jsonkit/routing.py": '''"""Routes: match a request to an endpoint and call it."""
import asyncio
import functools
import inspect
from typing import Any, Callable


async def run_endpoint_function(call: Callable[..., Any], values: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(call):
        return await call(**values)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(call, **values))


class Route:
    def __init__(self, path: str, endpoint: Callable[..., Any], methods: list[str]) -> None:
        self.path = path
        self.endpoint = endpoint
        self.methods = [m.upper() for m in methods]

    def matches(self, method: str, path: str) -> bool:
        return method.upper() in self.methods and path == self.path

    async def handle(self, values: dict[str, Any]) -> Any:
        return await run_endpoint_function(self.endpoint, values)
''',
    "jsonkit/params.py": '''"""Query parameters: read them from the query string and check their types."""
from typing import Any
from urllib.parse import parse_qs


class Query:
    def __init__(self, default: Any = ..., *, alias: str | None = None,
                 max_length: int | None = None) -> None:
        self.default = default
        self.alias = alias
        self.max_length = max_length


def request_params_to_args(fields: dict[str, tuple[type, Query]], query_string: str
                           ) -> tuple[dict[str, Any], list[str]]:
    raw = parse_qs(query_string)
    values: dict[str, Any] = {}
    errors: list[str] = []
    for name, (kind, spec) in fields.items():
        key = spec.alias or name
        if key not in raw:
            if spec.default is ...:
                errors.append(f"missing query parameter {key}")
            else:
                values[name] = spec.default
            continue
        text = raw[key][-1]
        if spec.max_length is not None and len(text) > spec.max_length:
            errors.append(f"{key} is longer than {spec.max_length}")
            continue
        try:
            values[name] = kind(text)
        except ValueError:
            errors.append(f"{key} is not a valid {kind.__name__}")
    return values, errors
''',
    "jsonkit/security.py": '''"""HTTP authentication schemes."""
import base64
import binascii
from dataclasses import dataclass


@dataclass
class HTTPBasicCredentials:
    username: str
    password: str


class HTTPBasic:
    def __call__(self, authorization: str | None) -> HTTPBasicCredentials:
        scheme, _, param = (authorization or "").partition(" ")
        if scheme.lower() != "basic":
            raise PermissionError("Not authenticated")
        try:
            data = base64.b64decode(param).decode("ascii")
        except (ValueError, UnicodeDecodeError, binascii.Error):
            raise PermissionError("Invalid authentication credentials")
        username, separator, password = data.partition(":")
        if not separator:
            raise PermissionError("Invalid authentication credentials")
        return HTTPBasicCredentials(username, password)
''',
}

ENCODER_PAGE_EN = '''# JSON Compatible Encoder

There are some cases where you might need to convert a data type (like a dataclass or a
Pydantic model) to something compatible with JSON (like a `dict`, `list`, etc).

For example, if you need to store it in a database.

For that, **jsonkit** provides a `jsonable_encoder()` function.

## Using the `jsonable_encoder`

Let's imagine that you have a database `fake_db` that only receives JSON compatible data.

For example, it doesn't receive `datetime` objects, as those are not compatible with JSON.
So, a `datetime` object would have to be converted to a `str` containing the data in ISO
format. A `Decimal` is converted to an `int` or a `float`.

The same way, this database wouldn't receive a dataclass, only a `dict`.

You can use `jsonable_encoder` for that. It receives an object, like a dataclass, and
returns a JSON compatible version:

```python
from jsonkit.encoders import jsonable_encoder

json_compatible_item_data = jsonable_encoder(item)
fake_db[id] = json_compatible_item_data
```

The result of calling it is something that can be encoded with the Python standard
`json.dumps()`. It doesn't return a large `str` containing the data in JSON format.
It returns a Python standard data structure (e.g. a `dict`) with values and sub-values
that are all compatible with JSON.
'''

ENCODER_PAGE_DE = '''# JSON-kompatibler Encoder

Es gibt Fälle, in denen Sie einen Datentyp (etwa eine Dataclass oder ein Pydantic-Modell)
in etwas konvertieren müssen, das mit JSON kompatibel ist (wie ein `dict`, eine `list`
usw.).

Zum Beispiel, wenn Sie es in einer Datenbank speichern müssen.

Dafür stellt **jsonkit** die Funktion `jsonable_encoder()` bereit.

## `jsonable_encoder` verwenden

Stellen wir uns vor, Sie haben eine Datenbank `fake_db`, die nur JSON-kompatible Daten
entgegennimmt.

Sie akzeptiert zum Beispiel keine `datetime`-Objekte, da diese nicht mit JSON kompatibel
sind. Ein `datetime`-Objekt müsste also in einen `str` umgewandelt werden, der die Daten
im ISO-Format enthält. Ein `Decimal` wird in einen `int` oder einen `float` umgewandelt.

Genauso würde diese Datenbank keine Dataclass annehmen, sondern nur ein `dict`.

Sie können dafür `jsonable_encoder` verwenden. Die Funktion nimmt ein Objekt entgegen, wie
eine Dataclass, und gibt eine JSON-kompatible Version zurück:

```python
from jsonkit.encoders import jsonable_encoder

json_compatible_item_data = jsonable_encoder(item)
fake_db[id] = json_compatible_item_data
```

Das Ergebnis ist etwas, das mit `json.dumps()` aus der Standardbibliothek kodiert werden
kann. Es gibt keinen großen `str` mit den Daten im JSON-Format zurück, sondern eine
Standard-Datenstruktur von Python (z. B. ein `dict`), deren Werte alle mit JSON kompatibel
sind.
'''

ENCODER_PAGE_JA = '''# JSON互換エンコーダ

データ型（データクラスやPydanticモデルなど）を、JSONと互換性のあるもの（`dict`や`list`など）に
変換する必要がある場合があります。

例えば、データベースに保存する必要がある場合です。

そのために、**jsonkit** は `jsonable_encoder()` 関数を提供しています。

## `jsonable_encoder` の使用

JSON互換のデータのみを受け取るデータベース `fake_db` があるとしましょう。

例えば、`datetime` オブジェクトはJSONと互換性がないため、受け取りません。
そのため、`datetime` オブジェクトは、ISO形式のデータを含む `str` に変換されなければなりません。
`Decimal` は `int` または `float` に変換されます。

同様に、このデータベースはデータクラスを受け取らず、`dict` のみを受け取ります。

そのために `jsonable_encoder` を使用できます。データクラスのようなオブジェクトを受け取り、
JSONと互換性のあるバージョンを返します。

```python
from jsonkit.encoders import jsonable_encoder

json_compatible_item_data = jsonable_encoder(item)
fake_db[id] = json_compatible_item_data
```

呼び出した結果は、Pythonの標準の `json.dumps()` でエンコードできるものです。
'''

QUERY_PAGE_EN = '''# Query Parameters

When you declare other function parameters that are not part of the path parameters, they
are automatically interpreted as "query" parameters.

```python
@app.get("/items/")
async def read_item(skip: int = 0, limit: int = 10):
    return fake_items_db[skip : skip + limit]
```

The query is the set of key-value pairs that go after the `?` in a URL, separated by `&`
characters. For example, in the URL `http://127.0.0.1:8000/items/?skip=0&limit=10` the
query parameters are `skip` with a value of `0` and `limit` with a value of `10`.

## Defaults

As query parameters are not a fixed part of a path, they can be optional and can have
default values. In the example above they have default values of `skip=0` and `limit=10`.

## Optional parameters

The same way, you can declare optional query parameters, by setting their default to
`None`. In this case, the function parameter `q` will be optional, and will be `None` by
default.

## Required query parameters

When you want to make a query parameter required, you can just not declare any default
value.

## Additional validation

To declare a maximum length or an alias, use `Query` as the default value:
`q: str | None = Query(default=None, max_length=50)`.
'''

QUERY_PAGE_RU = '''# Query-параметры

Когда вы объявляете параметры функции, которые не являются параметрами пути, они
автоматически интерпретируются как "query"-параметры.

```python
@app.get("/items/")
async def read_item(skip: int = 0, limit: int = 10):
    return fake_items_db[skip : skip + limit]
```

Query-параметры представляют собой набор пар ключ-значение, которые идут после знака `?`
в URL-адресе, разделенные символами `&`.

## Значения по умолчанию

Поскольку query-параметры не являются фиксированной частью пути, они могут быть
необязательными и иметь значения по умолчанию.

## Необязательные параметры

Аналогично, вы можете объявлять необязательные query-параметры, установив их значение
по умолчанию равным `None`.
'''

README = '''# jsonkit

A tiny web framework: routes, query parameters, HTTP authentication and a JSON encoder.

See the tutorial in `docs/en/docs/tutorial/`.
'''

README_ZH = '''# jsonkit

一个小型的 Web 框架：路由、查询参数、HTTP 认证以及 JSON 编码器。

请参阅 `docs/en/docs/tutorial/` 中的教程。所有文档都有多种语言的翻译版本，
包括德语、日语和俄语。
'''

BUNDLE = '''/*! jsonkit-widget v1.4.2 | MIT */
!function(e,t){"object"==typeof exports&&"undefined"!=typeof module?module.exports=t():e.widget=t()}(this,function(){
"use strict";
function encodeValue(v){return v instanceof Date?v.toISOString():v}
function renderItems(items){return items.map(function(i){return "<li>"+encodeValue(i)+"</li>"}).join("")}
return {encodeValue:encodeValue,renderItems:renderItems};
});
'''

TRANSLATED = {
    "docs/de/docs/tutorial/encoder.md", "docs/ja/docs/tutorial/encoder.md",
    "docs/ru/docs/tutorial/query-params.md", "README.zh-CN.md",
}


def framework_tree(root: RepoBuilder) -> RepoBuilder:
    for rel, text in CODE.items():
        root.write(rel, text)
    root.write("jsonkit/__init__.py", '"""jsonkit: a tiny web framework."""\n')
    root.write("pyproject.toml", '[project]\nname = "jsonkit"\nversion = "0.3.0"\n')
    root.write("README.md", README)
    root.write("README.zh-CN.md", README_ZH)
    root.write("docs/en/docs/tutorial/encoder.md", ENCODER_PAGE_EN)
    root.write("docs/en/docs/tutorial/query-params.md", QUERY_PAGE_EN)
    root.write("docs/de/docs/tutorial/encoder.md", ENCODER_PAGE_DE)
    root.write("docs/ja/docs/tutorial/encoder.md", ENCODER_PAGE_JA)
    root.write("docs/ru/docs/tutorial/query-params.md", QUERY_PAGE_RU)
    root.write("data/benchmarks.csv", "framework,requests_per_second,p99_ms\n" + "".join(
        f"run{i},{1000 + 37 * i},{4 + i % 7}\n" for i in range(60)))
    root.write("widget/package.json", '{"name": "jsonkit-widget", "main": "dist/widget.js"}\n')
    root.write("widget/src/widget.js", "export function encodeValue(v) {\n"
               "  return v instanceof Date ? v.toISOString() : v;\n}\n")
    root.write("widget/dist/widget.js", BUNDLE)
    return root


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory,
            real_embedder: SentenceTransformerEmbedder) -> Iterator[tuple[Service, IndexStats]]:
    base = tmp_path_factory.mktemp("issue29")
    root = framework_tree(RepoBuilder(base / "jsonkit")).root
    service = Service(load_settings({"home": str(base / "home")}), embedder=real_embedder)
    stats = service.index(root)
    yield service, stats
    service.close()


def top_files(service: Service, question: str, mode: str = "hybrid", n: int = 10) -> list[str]:
    files: list[str] = []
    for h in service.search(question, mode=mode, limit=20).results:
        if h.path not in files:
            files.append(h.path)
    return files[:n]


BEHAVIOUR = {
    "how are datetime and Decimal values converted to JSON compatible data":
        ("jsonkit/encoders.py", "docs/en/docs/tutorial/encoder.md"),
    "how is a dataclass turned into a dict that json.dumps can write":
        ("jsonkit/encoders.py", "docs/en/docs/tutorial/encoder.md"),
}


@pytest.mark.parametrize("question", sorted(BEHAVIOUR))
def test_a_behaviour_question_ranks_the_code_before_the_page_describing_it(
        indexed: tuple[Service, IndexStats], question: str) -> None:
    service, _stats = indexed
    code, page = BEHAVIOUR[question]
    files = top_files(service, question)
    assert files[0] == code, files
    assert page in files, files  # the prose still appears, after the code
    assert files.index(page) > files.index(code), files


@pytest.mark.parametrize("question,page", [
    ("how do I declare optional query parameters with default values?",
     "docs/en/docs/tutorial/query-params.md"),
    ("tutorial: use the JSON compatible encoder to store an item in a database",
     "docs/en/docs/tutorial/encoder.md"),
    # issue 42: a how-to however phrased (a task, first person, "need to")
    ("declare an optional query parameter with a default value",
     "docs/en/docs/tutorial/query-params.md"),
    ("I want to limit the length of a query parameter",
     "docs/en/docs/tutorial/query-params.md"),
    ("need to convert an item with dates to JSON compatible data before storing it",
     "docs/en/docs/tutorial/encoder.md"),
])
def test_a_usage_question_ranks_the_page_first(
        indexed: tuple[Service, IndexStats], question: str, page: str) -> None:
    service, _stats = indexed
    files = top_files(service, question)
    assert files[0] == page, files


def test_translations_are_lexical_only_and_named_with_the_key_that_brings_them_back(
        indexed: tuple[Service, IndexStats]) -> None:
    _service, stats = indexed
    roles = {f.path: f.role for f in stats.not_embedded_files}
    assert {p for p, r in roles.items() if r == "translation"} == TRANSLATED
    assert roles["widget/dist/widget.js"] == "built"
    line = not_embedded_line(stats.not_embedded, [f.path for f in stats.not_embedded_files])
    assert "translation 4" in line and "walk.embed_allow" in line, line
    assert 'embed_allow' in line and '"docs/de"' in line, line


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_an_english_question_sees_no_translation_in_its_top_10(
        indexed: tuple[Service, IndexStats], mode: str) -> None:
    service, _stats = indexed
    for question in [*BEHAVIOUR, "JSON compatible encoder", "query parameters default values"]:
        files = top_files(service, question, mode)
        assert not TRANSLATED & set(files), (mode, question, files)


@pytest.mark.parametrize("question,page", [
    ("Wie wandle ich datetime- und Decimal-Werte in JSON-kompatible Daten um?",
     "docs/de/docs/tutorial/encoder.md"),
    ("datetime オブジェクトをJSON互換のデータに変換するには？", "docs/ja/docs/tutorial/encoder.md"),
    ("Как объявить необязательные query-параметры со значениями по умолчанию?",
     "docs/ru/docs/tutorial/query-params.md"),
])
def test_a_question_in_a_translations_language_still_finds_it(
        indexed: tuple[Service, IndexStats], question: str, page: str) -> None:
    service, _stats = indexed
    files = top_files(service, question, n=3)
    assert page in files, files


def test_translations_stay_greppable(indexed: tuple[Service, IndexStats]) -> None:
    service, _stats = indexed
    hits = service.search('"JSON-kompatibler Encoder"', mode="lexical").results
    assert [h.path for h in hits] == ["docs/de/docs/tutorial/encoder.md"]
