"""Rebuild the graph-precision gold sets from real analysers on the pinned corpus.

    .venv/bin/python -m bench.graph_eval.build_gold [--work DIR] [--tsserver DIR] [--lang L]

Python: Jedi's project-wide find-references (`Script.get_references(scope="project")`),
with a sys.path of the repository's `src/`, its root and the standard library only, so
an installed copy of the same library never answers for the corpus. JavaScript and
TypeScript: the TypeScript language service's `findReferences` (tsrefs.js, run by node
with the `typescript` package from --tsserver, a folder where `npm install typescript`
was run; pinned as TS_VERSION).

One JSON line per definition: the repository, version and archive sha256, the
definition (`path`, `line`, `column`, `qualified_name`, `name`, `category`), and the
analyser's references, each with `path`, `line`, `column` (1-based), `kind` (`import`,
`call`, `annotation` (a quoted forward reference, `ctx: "Context"`), `export` (a name in
`__all__`) or `reference`). The definition's own site and other declarations of the
same name (overloads, overriding methods) are not references; nor are JSDoc mentions,
which the TypeScript service reports too. HAND_CHECKED adds the few references an
analyser provably missed (each with its reason); they carry `"by": "hand"`. `call` is a
reference directly followed by `(` (or `new X(`): the call sites `ctxd callers` should
find.

Categories: `distinctive` (a class or function with one definition of its name in the
repository) and `common` (a method whose name several definitions share: get, read,
close, send, request, ...). The targets below were picked by those two rules from each
repository's definitions (bench/graph_eval/README.md); the list is the gold's key.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import shutil
import subprocess
import sysconfig
import tempfile
import tokenize
from pathlib import Path
from typing import Any

from bench.graph_eval.corpus import PINS, fetch_all, pin_named

HERE = Path(__file__).resolve().parent
GOLD_DIR = HERE / "gold"
TS_VERSION = "5.6.3"
DEFAULT_WORK = Path("/tmp/ctxd-graph-eval")

D, C = "distinctive", "common"

# repository -> [(PATH::QUALNAME, category)]; the last definition of that name in PATH
# (an implementation after its @overload stubs).
TARGETS: dict[str, list[tuple[str, str]]] = {
    "requests": [
        ("src/requests/models.py::Request", D),
        ("src/requests/models.py::PreparedRequest", D),
        ("src/requests/structures.py::CaseInsensitiveDict", D),
        ("src/requests/_internal_utils.py::to_native_string", D),
        ("src/requests/cookies.py::cookiejar_from_dict", D),
        ("src/requests/hooks.py::default_hooks", D),
        ("src/requests/utils.py::get_auth_from_url", D),
        ("src/requests/adapters.py::HTTPAdapter", D),
        ("src/requests/sessions.py::Session", D),
        ("src/requests/sessions.py::Session.request", C),
        ("src/requests/sessions.py::Session.get", C),
        ("src/requests/sessions.py::Session.send", C),
        ("src/requests/sessions.py::Session.close", C),
        ("src/requests/models.py::Response.close", C),
        ("src/requests/cookies.py::RequestsCookieJar.set", C),
        ("src/requests/structures.py::CaseInsensitiveDict.copy", C),
        ("src/requests/models.py::PreparedRequest.prepare", C),
    ],
    "urllib3": [
        ("src/urllib3/util/retry.py::Retry", D),
        ("src/urllib3/connectionpool.py::HTTPConnectionPool", D),
        ("src/urllib3/_collections.py::HTTPHeaderDict", D),
        ("src/urllib3/util/connection.py::create_connection", D),
        ("src/urllib3/util/ssl_.py::assert_fingerprint", D),
        ("src/urllib3/util/url.py::Url", D),
        ("src/urllib3/poolmanager.py::PoolManager", D),
        ("src/urllib3/exceptions.py::MaxRetryError", D),
        ("src/urllib3/response.py::HTTPResponse.read", C),
        ("src/urllib3/response.py::HTTPResponse.stream", C),
        ("src/urllib3/response.py::HTTPResponse.release_conn", C),
        ("src/urllib3/connectionpool.py::HTTPConnectionPool.close", C),
        ("src/urllib3/connection.py::HTTPConnection.request", C),
        ("src/urllib3/connection.py::HTTPConnection.connect", C),
        ("src/urllib3/_request_methods.py::RequestMethods.request", C),
        ("src/urllib3/poolmanager.py::PoolManager.urlopen", C),
    ],
    "click": [
        ("src/click/utils.py::echo", D),
        ("src/click/core.py::Context", D),
        ("src/click/decorators.py::pass_context", D),
        ("src/click/types.py::Choice", D),
        ("src/click/exceptions.py::BadParameter", D),
        ("src/click/decorators.py::make_pass_decorator", D),
        ("src/click/utils.py::format_filename", D),
        ("src/click/formatting.py::HelpFormatter", D),
        ("src/click/termui.py::style", D),
        ("src/click/core.py::Context.invoke", C),
        ("src/click/core.py::Context.close", C),
        ("src/click/core.py::MultiCommand.get_command", C),
        ("src/click/types.py::ParamType.convert", C),
        ("src/click/types.py::ParamType.get_metavar", C),
        ("src/click/core.py::BaseCommand.parse_args", C),
        ("src/click/formatting.py::HelpFormatter.write", C),
        ("src/click/utils.py::LazyFile.close", C),
        ("src/click/core.py::Context.get_help", C),
    ],
    # held out: totals only (corpus.Pin.set)
    "jinja2": [
        ("src/jinja2/environment.py::Environment", D),
        ("src/jinja2/exceptions.py::TemplateSyntaxError", D),
        ("src/jinja2/exceptions.py::TemplateNotFound", D),
        ("src/jinja2/loaders.py::DictLoader", D),
        ("src/jinja2/runtime.py::Undefined", D),
        ("src/jinja2/runtime.py::Context", D),
        ("src/jinja2/utils.py::pass_context", D),
        ("src/jinja2/utils.py::urlize", D),
        ("src/jinja2/nodes.py::EvalContext", D),
        ("src/jinja2/nodes.py::Const", D),
        ("src/jinja2/nodes.py::Node", D),
        ("src/jinja2/parser.py::Parser.parse", C),
        ("src/jinja2/environment.py::Environment.parse", C),
        ("src/jinja2/environment.py::Environment.get_template", C),
        ("src/jinja2/environment.py::Environment.compile", C),
        ("src/jinja2/loaders.py::BaseLoader.get_source", C),
        ("src/jinja2/loaders.py::BaseLoader.load", C),
        ("src/jinja2/idtracking.py::Symbols.load", C),
        ("src/jinja2/runtime.py::Context.get", C),
        ("src/jinja2/runtime.py::Context.super", C),
        ("src/jinja2/utils.py::LRUCache.get", C),
        ("src/jinja2/utils.py::LRUCache.clear", C),
        ("src/jinja2/compiler.py::Frame.copy", C),
        ("src/jinja2/compiler.py::CodeGenerator.write", C),
    ],
}


# (repo, qualified name) -> [(path, line, kind)], and why the analyser missed them; each
# site read by hand (2026-11-28).
HAND_CHECKED: dict[tuple[str, str], tuple[str, list[tuple[str, int, str]]]] = {
    ("requests", "RequestsCookieJar.set"): (
        "`jar = requests.cookies.RequestsCookieJar()` two lines above each call; pyright "
        "reports none of them",
        [("tests/test_requests.py", n, "call") for n in (
            1240, 1258, 1259, 1278, 1279, 1297, 1298, 1313, 1314, 1329, 1330, 1344, 1345,
            1364, 1365)]),
    ("requests", "Session.send"): (
        "`s = requests.Session(); s = pickle.loads(pickle.dumps(s)); ... s.send(...)`: the "
        "round trip gives a Session back; pyright types `pickle.loads` as Any",
        [("tests/test_requests.py", 1560, "call")]),
    ("urllib3", "HTTPConnection.request"): (
        "`urllib3.connection.HTTPConnection.request` read and patched by its full path",
        [("test/contrib/emscripten/test_emscripten.py", 935, "reference"),
         ("test/contrib/emscripten/test_emscripten.py", 943, "reference")]),
    ("urllib3", "Retry"): (
        "`urllib3.util.Retry(...)` by its full path",
        [("test/contrib/emscripten/test_emscripten.py", 931, "call")]),
    ("axios", "AxiosHeaders.set"): (
        "`headers = AxiosHeaders.from(headers)` (a static `from` returning `new this()`, "
        "which the service cannot type in JavaScript)",
        [("lib/helpers/resolveConfig.js", 21, "call"),
         ("lib/helpers/resolveConfig.js", 50, "call")]),
}


# -- Python (Jedi) -----------------------------------------------------------------------

def _python_definition(root: Path, spec: str) -> tuple[str, str, int, int]:
    """(path, qualname, line, column) of PATH::QUAL; column 1-based at the name."""
    path, qual = spec.split("::")
    source = (root / path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    found: list[ast.AST] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{node.name}"
                if name == qual:
                    found.append(node)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, name + ".")

    walk(tree.body, "")
    if not found:
        raise SystemExit(f"no definition {qual} in {root.name}/{path}")
    node = found[-1]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    text = source.splitlines()[node.lineno - 1]
    col = text.index(node.name, text.index("class " if isinstance(node, ast.ClassDef)
                                           else "def "))
    return path, qual, node.lineno, col + 1


def _python_sys_path(root: Path) -> list[Path]:
    paths = [root / "src", root]
    paths += [Path(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib")]
    paths.append(Path(sysconfig.get_paths()["platstdlib"]) / "lib-dynload")
    return [p for p in paths if p.is_dir()]


def _kind(lines: list[str], line: int, col0: int, name: str, is_import: bool) -> str:
    if is_import:
        return "import"
    rest = lines[line - 1][col0 + len(name):].lstrip() if line <= len(lines) else ""
    return "call" if rest.startswith("(") else "reference"


def python_gold(repo: str, root: Path) -> list[dict[str, Any]]:
    import jedi

    project = jedi.Project(root, sys_path=[str(p) for p in _python_sys_path(root)],
                           smart_sys_path=False)
    pin = pin_named(repo)
    out = []
    for spec, category in TARGETS[repo]:
        path, qual, line, col = _python_definition(root, spec)
        name = qual.rsplit(".", 1)[-1]
        script = jedi.Script(path=root / path, project=project)
        refs: dict[tuple[str, int, int], str] = {}
        for r in script.get_references(line, col - 1, scope="project"):
            if r.module_path is None or r.line is None or r.column is None:
                continue
            try:
                rel = str(Path(r.module_path).resolve().relative_to(root.resolve()))
            except ValueError:
                continue  # outside the repository (the standard library)
            text = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
            site = text[r.line - 1] if r.line <= len(text) else ""
            stripped = site.lstrip()
            if r.is_definition() and (stripped.startswith(("def ", "async def ", "class "))):
                continue  # the definition itself, its overloads, overriding methods
            tree_name = getattr(r, "_name", None)
            tree_name = getattr(tree_name, "tree_name", None)
            is_import = bool(tree_name is not None and tree_name.search_ancestor(
                "import_from", "import_name"))
            refs[(rel, r.line, r.column + 1)] = _kind(text, r.line, r.column, name, is_import)
        out.append(_record(pin, category, path, qual, name, line, col, refs,
                           f"jedi {jedi.__version__}"))
        print(f"  {repo} {qual}: {len(refs)} references", flush=True)
    return out


def _record(pin: Any, category: str, path: str, qual: str, name: str, line: int, col: int,
            refs: dict[tuple[str, int, int], str], analyser: str) -> dict[str, Any]:
    refs_out = [{"path": p, "line": ln, "column": c, "kind": k}
                for (p, ln, c), k in sorted(refs.items())]
    seen = {(r["path"], r["line"]) for r in refs_out}
    _why, added = HAND_CHECKED.get((pin.name, qual), ("", []))
    refs_out += [{"path": p, "line": ln, "column": 0, "kind": k, "by": "hand"}
                 for p, ln, k in added if (p, ln) not in seen]
    return {
        "language": pin.language, "repo": pin.name, "package": pin.package,
        "version": pin.version, "archive_sha256": pin.sha256, "analyser": analyser,
        "set": pin.set, "category": category, "name": name, "qualified_name": qual,
        "definition": {"path": path, "line": line, "column": col},
        "references": refs_out,
    }


PYRIGHT_VERSION = "1.1.389"


def _import_lines(source: str) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _string_spans(source: str) -> tuple[list[tuple[int, int, int, int]], set[int]]:
    """The (line, col, end line, end col) of every string token (0-based columns), and the
    lines of `__all__ = [...]` assignments."""
    spans: list[tuple[int, int, int, int]] = []
    all_lines: set[int] = set()
    try:
        # f-strings are one token before Python 3.12: the names pyright finds in one
        # are in its code parts, so they are not strings here
        spans += [(*tok.start, *tok.end) for tok in
                  tokenize.generate_tokens(io.StringIO(source).readline)
                  if tok.type == tokenize.STRING
                  and "f" not in tok.string[:3].lower().split("'")[0].split('"')[0]]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    all_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    except (SyntaxError, tokenize.TokenError):
        pass
    return spans, all_lines


def _in_string(spans: list[tuple[int, int, int, int]], line: int, col0: int) -> bool:
    return any((l1, c1) <= (line, col0) < (l2, c2) for l1, c1, l2, c2 in spans)


def pyright_gold(repo: str, corpus_root: Path, tsserver: Path) -> list[dict[str, Any]]:
    """Pyright's `textDocument/references` over a copy of the repository whose
    pyrightconfig.json includes every file (a project's own `[tool.pyright] include`,
    jinja2's `src/jinja2` only, would hide its tests), the interpreter a bare system Python
    (no installed copy of the library), the repository's `src/` an extra import root."""
    with tempfile.TemporaryDirectory(prefix="graph-eval-pyright-") as tmp:
        root = Path(tmp) / repo
        shutil.copytree(corpus_root, root, symlinks=True)
        (root / "pyrightconfig.json").write_text(json.dumps({
            "include": ["."], "extraPaths": ["src"], "typeCheckingMode": "off"}))
        return _pyright_refs(repo, root, tsserver)


def _pyright_refs(repo: str, root: Path, tsserver: Path) -> list[dict[str, Any]]:
    from bench.graph_eval.lsp import LspClient

    settings = {"python": {"pythonPath": "/usr/bin/python3", "analysis": {
        "extraPaths": [str(root / "src")], "diagnosticMode": "openFilesOnly",
        "useLibraryCodeForTypes": True, "typeCheckingMode": "off"}}}
    server = tsserver / "node_modules" / "pyright" / "langserver.index.js"
    pin = pin_named(repo)
    out = []
    sources: dict[str, tuple[list[str], set[int], list[tuple[int, int, int, int]], set[int]]] = {}
    with LspClient(["node", str(server), "--stdio"], root.resolve(), settings) as lsp:
        for spec, category in TARGETS[repo]:
            path, qual, line, col = _python_definition(root, spec)
            name = qual.rsplit(".", 1)[-1]
            refs: dict[tuple[str, int, int], str] = {}
            for abspath, line0, col0 in lsp.references((root / path).resolve(), line - 1,
                                                       col - 1):
                try:
                    rel = str(abspath.relative_to(root.resolve()))
                except ValueError:
                    continue  # outside the repository
                if rel not in sources:
                    text = (root / rel).read_text(encoding="utf-8", errors="replace")
                    try:
                        imports = _import_lines(text)
                    except SyntaxError:
                        imports = set()
                    sources[rel] = (text.splitlines(), imports, *_string_spans(text))
                lines, imports, strings, all_lines = sources[rel]
                site = lines[line0].lstrip() if line0 < len(lines) else ""
                if site.startswith(("def ", "async def ", "class ")) and (
                        site.split("(")[0].split(":")[0].split()[-1] == name):
                    continue  # overloads and overriding definitions
                if _in_string(strings, line0 + 1, col0):
                    # a name in `__all__` (what `import *` re-exports), or a quoted
                    # annotation ("Context"): a forward reference; both code to pyright
                    refs[(rel, line0 + 1, col0 + 1)] = ("export" if line0 + 1 in all_lines
                                                        else "annotation")
                    continue
                refs[(rel, line0 + 1, col0 + 1)] = _kind(lines, line0 + 1, col0, name,
                                                         line0 + 1 in imports)
            out.append(_record(pin, category, path, qual, name, line, col, refs,
                               f"pyright {PYRIGHT_VERSION}"))
            print(f"  {repo} {qual}: {len(refs)} references", flush=True)
    return out


# -- TypeScript / JavaScript (the TypeScript language service) ----------------------------

TS_TARGETS: dict[str, list[tuple[str, str]]] = {
    "axios": [
        ("lib/core/AxiosError.js::AxiosError", D),
        ("lib/core/AxiosHeaders.js::AxiosHeaders", D),
        ("lib/core/InterceptorManager.js::InterceptorManager", D),
        ("lib/core/mergeConfig.js::mergeConfig", D),
        ("lib/helpers/buildURL.js::buildURL", D),
        ("lib/helpers/toFormData.js::toFormData", D),
        ("lib/core/settle.js::settle", D),
        ("lib/core/dispatchRequest.js::dispatchRequest", D),
        ("lib/helpers/combineURLs.js::combineURLs", D),
        ("lib/core/buildFullPath.js::buildFullPath", D),
        ("lib/cancel/CanceledError.js::CanceledError", D),
        ("lib/core/AxiosHeaders.js::AxiosHeaders.set", C),
        ("lib/core/AxiosHeaders.js::AxiosHeaders.delete", C),
        ("lib/core/AxiosHeaders.js::AxiosHeaders.normalize", C),
        ("lib/core/AxiosHeaders.js::AxiosHeaders.concat", C),
        ("lib/core/AxiosHeaders.js::AxiosHeaders.toJSON", C),
        ("lib/core/InterceptorManager.js::InterceptorManager.forEach", C),
        ("lib/core/Axios.js::Axios.request", C),
        ("lib/utils.js::forEach", C),
    ],
    "rxjs": [
        ("src/internal/Observable.ts::Observable", D),
        ("src/internal/Subscriber.ts::Subscriber", D),
        ("src/internal/Subscription.ts::Subscription", D),
        ("src/internal/util/lift.ts::operate", D),
        ("src/internal/operators/OperatorSubscriber.ts::createOperatorSubscriber", D),
        ("src/internal/util/isFunction.ts::isFunction", D),
        ("src/internal/observable/innerFrom.ts::innerFrom", D),
        ("src/internal/operators/mergeMap.ts::mergeMap", D),
        ("src/internal/util/executeSchedule.ts::executeSchedule", D),
        ("src/internal/util/arrRemove.ts::arrRemove", D),
        ("src/internal/util/errorContext.ts::errorContext", D),
        ("src/internal/Subscription.ts::Subscription.add", C),
        ("src/internal/Subscription.ts::Subscription.remove", C),
        ("src/internal/Subscription.ts::Subscription.unsubscribe", C),
        ("src/internal/Subscriber.ts::Subscriber.next", C),
        ("src/internal/Subscriber.ts::Subscriber.error", C),
        ("src/internal/Subscriber.ts::Subscriber.complete", C),
        ("src/internal/Subject.ts::Subject.next", C),
        ("src/internal/Subject.ts::Subject.complete", C),
        ("src/internal/Observable.ts::Observable.subscribe", C),
        ("src/internal/Observable.ts::Observable.pipe", C),
        ("src/internal/scheduler/AsyncAction.ts::AsyncAction.schedule", C),
        ("src/internal/scheduler/AsyncScheduler.ts::AsyncScheduler.flush", C),
    ],
    # held out: totals only (corpus.Pin.set)
    "query-core": [
        ("src/queryClient.ts::QueryClient", D),
        ("src/queryCache.ts::QueryCache", D),
        ("src/query.ts::Query", D),
        ("src/queryObserver.ts::QueryObserver", D),
        ("src/mutationObserver.ts::MutationObserver", D),
        ("src/utils.ts::hashKey", D),
        ("src/utils.ts::partialMatchKey", D),
        ("src/utils.ts::matchQuery", D),
        ("src/utils.ts::replaceEqualDeep", D),
        ("src/utils.ts::timeUntilStale", D),
        ("src/utils.ts::functionalUpdate", D),
        ("src/retryer.ts::createRetryer", D),
        ("src/queryCache.ts::QueryCache.build", C),
        ("src/queryCache.ts::QueryCache.find", C),
        ("src/queryCache.ts::QueryCache.notify", C),
        ("src/queryCache.ts::QueryCache.add", C),
        ("src/queryCache.ts::QueryCache.remove", C),
        ("src/queryCache.ts::QueryCache.clear", C),
        ("src/queryCache.ts::QueryCache.getAll", C),
        ("src/subscribable.ts::Subscribable.subscribe", C),
        ("src/query.ts::Query.fetch", C),
        ("src/query.ts::Query.cancel", C),
        ("src/query.ts::Query.destroy", C),
        ("src/query.ts::Query.setOptions", C),
        ("src/queryObserver.ts::QueryObserver.setOptions", C),
        ("src/queryClient.ts::QueryClient.getQueryCache", C),
    ],
}


def ts_gold(repo: str, root: Path, tsserver: Path) -> list[dict[str, Any]]:
    pin = pin_named(repo)
    request = {"root": str(root), "targets": [s for s, _c in TS_TARGETS[repo]]}
    proc = subprocess.run(
        ["node", str(HERE / "tsrefs.js")], input=json.dumps(request), text=True,
        capture_output=True, check=False, env={"NODE_PATH": str(tsserver / "node_modules"),
                                               "PATH": "/usr/bin:/bin:/usr/local/bin"},
    )
    if proc.returncode:
        raise SystemExit(f"tsrefs.js failed on {repo}:\n{proc.stderr}")
    answer = json.loads(proc.stdout)
    out = []
    for (spec, category), found in zip(TS_TARGETS[repo], answer["targets"], strict=True):
        d = found["definition"]
        refs = {(r["path"], r["line"], r["column"]): r["kind"] for r in found["references"]}
        qual = spec.split("::")[1]
        out.append(_record(pin, category, d["path"], qual, qual.rsplit(".", 1)[-1],
                           d["line"], d["column"], refs, f"typescript {answer['version']}"))
        print(f"  {repo} {qual}: {len(refs)} references", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK,
                    help=f"archives and unpacked corpus (default {DEFAULT_WORK})")
    ap.add_argument("--tsserver", type=Path, default=Path("/work/coord/tsls"),
                    help=f"a folder with node_modules/typescript ({TS_VERSION}) and "
                    f"node_modules/pyright ({PYRIGHT_VERSION})")
    ap.add_argument("--python-analyser", choices=["pyright", "jedi"], default="pyright")
    ap.add_argument("--lang", choices=["python", "typescript"], action="append")
    args = ap.parse_args()
    langs = set(args.lang or ["python", "typescript"])
    roots = fetch_all(args.work, {p.name for p in PINS if p.language in langs})
    GOLD_DIR.mkdir(exist_ok=True)
    if "python" in langs:
        rows = [r for repo in TARGETS for r in (
            python_gold(repo, roots[repo]) if args.python_analyser == "jedi"
            else pyright_gold(repo, roots[repo], args.tsserver))]
        _write(GOLD_DIR / "python.jsonl", rows)
    if "typescript" in langs:
        rows = [r for repo in TS_TARGETS for r in ts_gold(repo, roots[repo], args.tsserver)]
        _write(GOLD_DIR / "typescript.jsonl", rows)


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    print(f"{path}: {len(rows)} definitions, "
          f"{sum(len(r['references']) for r in rows)} references")


if __name__ == "__main__":
    main()
