"""The Go, Rust and C gold of bench/graph_eval, written by hand (no gopls, rust-analyzer or
clangd here).

    .venv/bin/python -m bench.graph_eval.hand_gold [--work DIR]

Each target below lists every reference site of one definition, decided by reading the
code at the pinned commit (corpus.py): `grep -rnw NAME` gave the candidates, and each
was kept or dropped by the language's rules (the receiver's declared type, the `use`
path, the impl block), as gopls / rust-analyzer would answer `references` with the
declaration excluded (bench/graph_eval/README.md, "Go and Rust by hand"); the C targets
(`C_TARGETS`) by a stated rule over every code occurrence of the name. This module writes
gold/go.jsonl, gold/rust.jsonl and gold/c.jsonl in the same record format as the analysers'
gold, with `"analyser": "hand"`; a site's column is the name's first whole-word
occurrence on its line and its kind is `call` when the name is followed by `(` (or
`::<`), unless the entry says `import`/`reference`. `via` notes why a site that is not
a plain static call counts (a call through an interface the method satisfies, a macro
body). Writing checks that every site's line holds the name.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from bench.graph_eval.corpus import DEFAULT_MIRRORS, Pin, fetch, pin_named

HERE = Path(__file__).resolve().parent
DEFAULT_WORK = Path("/tmp/ctxd-graph-eval")


def _lines(path: str, *nums: int, suffix: str = "") -> list[str]:
    return [f"{path}:{n}{suffix}" for n in nums]


# Each target: repo, name, qualified_name, category, definition "path:line", the rule
# that decided its sites, and its references "path:line[:kind][@via]".
TARGETS: list[dict[str, Any]] = [
    # ---- Go: gin ----------------------------------------------------------------------
    {"repo": "gin", "name": "filterFlags", "qualified_name": "filterFlags",
     "category": "distinctive", "definition": "utils.go:91",
     "rule": "package-level function of package gin: every bare call in package gin",
     "references": ["context.go:1060", *_lines("utils_test.go", 83, 86)]},
    {"repo": "gin", "name": "bodyAllowedForStatus", "qualified_name": "bodyAllowedForStatus",
     "category": "distinctive", "definition": "context.go:1110",
     "rule": "package-level function; the comment at context.go:1108 is not a reference",
     "references": ["context.go:1205", *_lines("context_test.go", 1122, 1123, 1124, 1125,
                                                1126)]},
    {"repo": "gin", "name": "LoggerWithFormatter", "qualified_name": "LoggerWithFormatter",
     "category": "distinctive", "definition": "logger.go:229",
     "rule": "package-level function; comments and Markdown are not references",
     "references": ["logger_test.go:160"]},
    {"repo": "gin", "name": "Get", "qualified_name": "Params.Get", "category": "common",
     "definition": "tree.go:29",
     "rule": "receiver of type Params (`ps`, `c.Params` of a *Context); Context.Get, "
             "http.Header.Get, url.Values.Get, reflect.StructTag.Get, sync.Pool.Get and "
             "http.Client.Get are other methods",
     "references": ["tree.go:41", "context_test.go:3497",
                    *_lines("routes_test.go", 286, 295, 319, 328, 358, 367)]},
    {"repo": "gin", "name": "Get", "qualified_name": "Context.Get", "category": "common",
     "definition": "context.go:298",
     "rule": "receiver of type *Context (`c` from CreateTestContext, `&Context{}`, a "
             "handler's `c *Context`); `c.Params.Get` is Params.Get",
     "references": [*_lines("context.go", 307, 314, 953, 1531),
                    *_lines("context_test.go", 369, 373, 403, 457, 461, 3265, 3269, 3569,
                            3588, 3591, 3594)]},
    {"repo": "gin", "name": "Size", "qualified_name": "responseWriter.Size",
     "category": "common", "definition": "response_writer.go:102",
     "rule": "gopls: a concrete method's references include calls through the interface "
             "methods it implements (here gin.ResponseWriter.Size: `w := "
             "ResponseWriter(writer)`, `c.Writer` of type ResponseWriter); the interface's "
             "declaration (response_writer.go:34) is another definition",
     "references": [*_lines("response_writer_test.go", 74, 104, 109, 120, 128,
                            suffix="@interface ResponseWriter"),
                    "logger.go:304@interface ResponseWriter"]},
    {"repo": "gin", "name": "Written", "qualified_name": "responseWriter.Written",
     "category": "common", "definition": "response_writer.go:106",
     "rule": "as Size: `w *responseWriter` and `c.writermem` (a responseWriter) call it "
             "directly; `w` of type ResponseWriter through the interface",
     "references": [*_lines("response_writer.go", 69, 78), "gin.go:767",
                    *_lines("response_writer_test.go", 76, 86, 103, 147, 204, 210, 218,
                            266, 276, 307, suffix="@interface ResponseWriter")]},
    # ---- Go: cobra --------------------------------------------------------------------
    {"repo": "cobra", "name": "stripFlags", "qualified_name": "stripFlags",
     "category": "distinctive", "definition": "command.go:674",
     "rule": "package-level function of package cobra",
     "references": [*_lines("command.go", 761, 776), "command_test.go:709"]},
    {"repo": "cobra", "name": "hasNoOptDefVal", "qualified_name": "hasNoOptDefVal",
     "category": "distinctive", "definition": "command.go:654",
     "rule": "package-level function of package cobra",
     "references": _lines("command.go", 691, 729, 830)},
    {"repo": "cobra", "name": "Parent", "qualified_name": "Command.Parent",
     "category": "common", "definition": "command.go:1892",
     "rule": "every receiver is a *Command (`c`, `cmd`, `p`, `echoCmd` of package doc "
             "through cobra.Command)",
     "references": [*_lines("command.go", 449, 489, 886, 887, 894, 973, 1028, 1467, 1612),
                    *_lines("doc/man_docs_test.go", 53, 88), "doc/md_docs.go:86",
                    "doc/rest_docs.go:101", "doc/man_docs.go:221", "doc/yaml_docs.go:123"]},
    {"repo": "cobra", "name": "Root", "qualified_name": "Command.Root",
     "category": "common", "definition": "command.go:892",
     "rule": "every receiver is a *Command (the enclosing function's `c`/`cmd *Command`, "
             "`finalCmd`, `c.Parent()`)",
     "references": ["active_help.go:50",
                    *_lines("completions.go", 330, 331, 338, 505, 777, 827, 832, 864, 869,
                            871, 892, 896, 914, 919, 921, 1019),
                    *_lines("command.go", 354, 894, 1091, 1276, 1282, 1294, 1297, 1918),
                    *_lines("bash_completions.go", 467, 486, 547, 576, 663)]},
    # ---- Rust: ripgrep ----------------------------------------------------------------
    {"repo": "ripgrep", "name": "unescape", "qualified_name": "grep_cli::escape::unescape",
     "category": "distinctive", "definition": "crates/cli/src/escape.rs:67",
     "rule": "free function; `pub use escape::{.., unescape, ..}` and the tests' `use "
             "super::{escape, unescape}` are imports; doc comments (intra-doc links, doc "
             "tests in lib.rs) are left out",
     "references": ["crates/cli/src/lib.rs:139:import", "crates/cli/src/escape.rs:78",
                    "crates/cli/src/escape.rs:83:import",
                    *_lines("crates/cli/src/escape.rs", 91, 97, 103, 104, 110, 116, 122, 128,
                            129, 135, 136, 142, 143, 149, 150)]},
    {"repo": "ripgrep", "name": "new_regex", "qualified_name": "globset::new_regex",
     "category": "distinctive", "definition": "crates/globset/src/lib.rs:271",
     "rule": "free function of the globset crate root; `use crate::{.., new_regex}`",
     "references": ["crates/globset/src/glob.rs:6:import",
                    *_lines("crates/globset/src/glob.rs", 290, 303),
                    "crates/globset/src/lib.rs:1090"]},
    {"repo": "ripgrep", "name": "file_name_ext",
     "qualified_name": "globset::pathutil::file_name_ext",
     "category": "distinctive", "definition": "crates/globset/src/pathutil.rs:40",
     "rule": "free function; `use super::{..}` in the tests and `pathutil::{..}` in lib.rs",
     "references": ["crates/globset/src/pathutil.rs:85:import",
                    "crates/globset/src/pathutil.rs:108",
                    "crates/globset/src/lib.rs:133:import", "crates/globset/src/lib.rs:636"]},
    {"repo": "ripgrep", "name": "new", "qualified_name": "Candidate::new", "category": "common",
     "definition": "crates/globset/src/lib.rs:617",
     "rule": "`Candidate::new(..)` by path (Candidate imported from globset); GlobSet::new, "
             "GlobSetBuilder::new and the many other `new`s are other functions; `use "
             "..Candidate` names the type, not `new`",
     "references": ["crates/ignore/src/gitignore.rs:269",
                    *_lines("crates/globset/benches/bench.rs", 45, 58, 71),
                    *_lines("crates/globset/src/glob.rs", 143, 171),
                    *_lines("crates/globset/src/lib.rs", 343, 380, 402, 430)]},
    {"repo": "ripgrep", "name": "is_empty", "qualified_name": "GlobSet::is_empty",
     "category": "common", "definition": "crates/globset/src/lib.rs:331",
     "rule": "receiver of type GlobSet: `self` in `impl GlobSet`, the `set: GlobSet` "
             "fields of ignore's Types and Gitignore; str/Vec/slice/LiteralSet is_empty "
             "and the private `is_empty`s of globset's strategies are other methods",
     "references": [*_lines("crates/globset/src/lib.rs", 351, 412, 448),
                    "crates/ignore/src/types.rs:270", "crates/ignore/src/gitignore.rs:172"]},
    {"repo": "ripgrep", "name": "len", "qualified_name": "GlobSet::len", "category": "common",
     "definition": "crates/globset/src/lib.rs:337",
     "rule": "receiver of type GlobSet (Gitignore's `set` field); the `len` field and "
             "every other `.len()` are not it",
     "references": ["crates/ignore/src/gitignore.rs:178"]},
    # ---- Rust: axum -------------------------------------------------------------------
    {"repo": "axum", "name": "validate_nest_path", "qualified_name": "validate_nest_path",
     "category": "distinctive", "definition": "axum/src/routing/path_router.rs:445",
     "rule": "private free function of the module",
     "references": _lines("axum/src/routing/path_router.rs", 177, 222)},
    {"repo": "axum", "name": "append_allow_header", "qualified_name": "append_allow_header",
     "category": "distinctive", "definition": "axum/src/routing/method_routing.rs:1260",
     "rule": "private free function of the module",
     "references": _lines("axum/src/routing/method_routing.rs", 584, 912)},
    {"repo": "axum", "name": "merge", "qualified_name": "Router::merge", "category": "common",
     "definition": "axum/src/routing/mod.rs:258",
     "rule": "receiver of type Router (`Router::new()...` chains, `let one = "
             "Router::new()..`, functions returning Router); MethodRouter::merge, "
             "PathRouter::merge, Fallback::merge and AllowHeader::merge are other methods; "
             "the docs/*.md pulled in by include_str are not code",
     "references": [
         *_lines("examples/routes-and-handlers-close-together/src/main.rs", 15, 16, 17),
         "axum-extra/src/routing/resource.rs:176", "axum/benches/benches.rs:30",
         *_lines("axum/src/routing/tests/merge.rs", 12, 39, 40, 41, 48, 49, 56, 60, 79, 94,
                 114, 134, 148, 160, 172, 173, 174, 175, 176, 177, 201, 234, 267, 301, 345,
                 379),
         *_lines("axum/src/routing/tests/fallback.rs", 51, 219, 239, 258, 278, 297, 312,
                 323),
         *_lines("axum/src/routing/tests/mod.rs", 787, 804, 812)]},
    {"repo": "axum", "name": "merge", "qualified_name": "MethodRouter::merge",
     "category": "common", "definition": "axum/src/routing/method_routing.rs:1171",
     "rule": "receiver of type MethodRouter (`get(ok)`, `put(ok).patch(ok)`, `post(..)`); "
             "`self.fallback.merge`/`self.allow_header.merge` (1161, 1164) are Fallback's "
             "and AllowHeader's",
     "references": _lines("axum/src/routing/method_routing.rs", 1484, 1536, 1577, 1588,
                          1709)},
    {"repo": "axum", "name": "get", "qualified_name": "CookieJar::get", "category": "common",
     "definition": "axum-extra/src/extract/cookie/mod.rs:169",
     "rule": "receiver of type axum_extra CookieJar: the `cookie_test!` macro body whose "
             "expansion `cookie_test!(plaintext_cookies, CookieJar)` has `jar: CookieJar` "
             "(rust-analyzer maps the expansion's reference back to the macro body); "
             "`self.jar.get` is the cookie crate's CookieJar, SignedCookieJar::get and "
             "PrivateCookieJar::get are other methods, doc-comment examples are left out",
     "references": ["axum-extra/src/extract/cookie/mod.rs:258@macro cookie_test! expansion"]},
]


# C (jq): no function of these names is defined twice where one file sees both, and no
# local variable or field bears them, so every occurrence of the name in code (comments
# and string literals stripped, macro bodies kept) in the .c/.h/.cpp files under `roots` is a
# reference, less the definition and the prototypes (`exclude`); `_c_sites` lists them
# and the build prints how many, to check against `grep -rnw NAME --include=*.[ch]`.
C_TARGETS: list[dict[str, Any]] = [
    {"repo": "jq", "name": "jv_parse", "qualified_name": "jv_parse", "category": "distinctive",
     "definition": "src/jv_parse.c:913",
     "rule": "extern function declared in src/jv.h (the prototype at jv.h:245 is a "
             "declaration, not a reference); every caller includes jv.h",
     "grep": ("src", "tests"), "exclude": ["src/jv.h:245"]},
    {"repo": "jq", "name": "jv_free", "qualified_name": "jv_free", "category": "common",
     "definition": "src/jv.c:2014",
     "rule": "extern function declared in src/jv.h:55, called from most files (also in "
             "generated lexer.c/parser.c and in macro bodies)",
     "grep": ("src", "tests"), "exclude": ["src/jv.h:55"]},
    {"repo": "jq", "name": "jv_string", "qualified_name": "jv_string", "category": "common",
     "definition": "src/jv.c:1323",
     "rule": "extern function declared in src/jv.h:124",
     "grep": ("src", "tests"), "exclude": ["src/jv.h:124"]},
    {"repo": "jq", "name": "make_error", "qualified_name": "make_error",
     "category": "distinctive", "definition": "src/jv_parse.c:762",
     "rule": "static function of jv_parse.c (its static prototype at 760 is a declaration)",
     "grep": ("src",), "exclude": ["src/jv_parse.c:760"]},
    {"repo": "jq", "name": "my_mktime", "qualified_name": "my_mktime",
     "category": "distinctive", "definition": "src/builtin.c:1537",
     "rule": "static function of builtin.c", "grep": ("src",), "exclude": []},
    {"repo": "jq", "name": "strptime", "qualified_name": "strptime", "category": "common",
     "definition": "src/util.c:617",
     "rule": "named like libc's: jq defines it (util.c) and declares it in util.h:63 "
             "(#ifndef HAVE_STRPTIME), which builtin.c includes, so builtin.c's call is "
             "read as a call of it (as a build without HAVE_STRPTIME links it); "
             "f_strptime and the \"strptime\" string are other names",
     "grep": ("src",), "exclude": ["src/util.h:63"]},
]

_C_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                      re.DOTALL)


def _c_sites(root: Path, name: str, roots: tuple[str, ...], skip: set[str]) -> list[str]:
    """`path:line` of each line of the .c/.h files under `roots` where `name` occurs as
    a whole word in code (comments and string/char literals blanked, newlines kept)."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    out: list[str] = []
    for top in roots:
        for f in sorted((root / top).rglob("*")):
            if f.suffix not in (".c", ".h", ".cpp", ".cc") or not f.is_file():
                continue
            text = f.read_text(encoding="utf-8", errors="replace")
            code = _C_NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
            rel = f.relative_to(root).as_posix()
            for n, line in enumerate(code.split("\n"), 1):
                if word.search(line) and f"{rel}:{n}" not in skip:
                    out.append(f"{rel}:{n}")
    return out


def _site(spec: str) -> tuple[str, int, str | None, str | None]:
    spec, _, via = spec.partition("@")
    parts = spec.split(":")
    kind = parts[2] if len(parts) > 2 else None
    return parts[0], int(parts[1]), kind, via or None


def _column_and_kind(text: str, name: str) -> tuple[int, str]:
    m = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text)
    if m is None:
        raise SystemExit(f"{name!r} is not on the line {text!r}")
    after = text[m.end():].lstrip()
    return m.start() + 1, "call" if after.startswith(("(", "::<")) else "reference"


def gold_record(t: dict[str, Any], pin: Pin, root: Path) -> dict[str, Any]:
    """One target's gold record: its definition and hand-kept sites (`_site` specs) with
    their columns and kinds read from the pinned tree at `root`."""
    cache: dict[str, list[str]] = {}

    def line_of(path: str, n: int) -> str:
        if path not in cache:
            cache[path] = (root / path).read_text(encoding="utf-8").splitlines()
        return cache[path][n - 1]

    dpath, dline, _, _ = _site(t["definition"])
    dcol, _ = _column_and_kind(line_of(dpath, dline), t["name"])
    refs = []
    for spec in t["references"]:
        path, n, kind, via = _site(spec)
        col, auto = _column_and_kind(line_of(path, n), t["name"])
        ref: dict[str, Any] = {"column": col, "kind": kind or auto, "line": n,
                               "path": path, "by": "hand"}
        if via:
            ref["via"] = via
        refs.append(ref)
    refs.sort(key=lambda r: (r["path"], r["line"]))
    return {
        "analyser": "hand", "archive_sha256": pin.sha256, "category": t["category"],
        "definition": {"column": dcol, "line": dline, "path": dpath},
        "language": pin.language, "name": t["name"], "package": pin.package,
        "qualified_name": t["qualified_name"], "references": refs, "repo": pin.name,
        "rule": t["rule"], "set": "dev", "version": pin.version,
    }


def write_gold(gold: dict[str, list[dict[str, Any]]]) -> None:
    """gold/<language>.jsonl for each language with records."""
    for lang, records in gold.items():
        if not records:
            continue
        path = HERE / "gold" / f"{lang}.jsonl"
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        print(f"{path}: {len(records)} definitions, "
              f"{sum(len(r['references']) for r in records)} references")


def build(work: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"go": [], "rust": [], "c": []}
    roots: dict[str, Path] = {}
    for t in [*TARGETS, *C_TARGETS]:
        pin = pin_named(t["repo"])
        root = roots.setdefault(pin.name, fetch(pin, work))
        if "grep" in t:
            t = {**t, "references": _c_sites(root, t["name"], t["grep"],
                                             {t["definition"], *t["exclude"]})}
            print(f"{t['repo']} {t['name']}: {len(t['references'])} lines")
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
