"""File summaries: what one code file's summary says, and how the index keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
from ctxd.indexer.chunk.summary import file_summary
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions

HELP_PY = '''#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""Module containing bug report helper(s).

This second paragraph is not part of the summary.
"""
import sys


class Reporter:
    """Collects versions of the HTTP stack.

    Details nobody needs in a summary.
    """

    def __init__(self):
        self.parts = []

    def add(self, name):
        return name

    class Inner:
        def hidden(self):
            return 1


def info():
    """Print the versions."""
    return sys.version


def _private():
    return 0
'''

GO_FILE = '''// Copyright 2024 The Authors. Licensed under the Apache License.

package pool

// Pool keeps idle connections per host.
type Pool struct {
	idle int
}

// Get returns an idle connection or dials a new one.
func (p *Pool) Get() int {
	return p.idle
}

func Dial() int { return 0 }
'''


def summary_of_source(path: str, text: str) -> str | None:
    fc = chunk_file(path, text, ChunkOptions(), lambda texts: [len(t.split()) for t in texts])
    return file_summary(path, fc.language, text, fc.symbols)


def test_a_python_summary_has_path_module_doc_classes_and_names():
    summary = summary_of_source("src/pkg/help.py", HELP_PY)
    assert summary is not None
    lines = summary.split("\n")
    assert lines[0] == "file src/pkg/help.py"
    assert lines[1] == "Module containing bug report helper(s)."
    assert lines[2] == "class Reporter: Collects versions of the HTTP stack."
    assert lines[3] == "Reporter.add; def info; def _private"
    assert "__init__" not in summary  # dunder methods say nothing
    assert "hidden" not in summary and "second paragraph" not in summary


def test_other_languages_use_the_comment_above_and_skip_a_licence_header():
    summary = summary_of_source("pool/pool.go", GO_FILE)
    assert summary is not None
    assert "Copyright" not in summary and "Apache" not in summary
    assert "Pool keeps idle connections per host." in summary
    assert "Dial" in summary


@pytest.mark.parametrize("path,text", [
    ("README.md", "# Shop\n\nA tiny shop.\n\n## Usage\n\nRun it.\n"),
    ("notes.txt", "remember the milk\n"),
    ("empty.py", "X = 1\n"),
])
def test_files_without_definitions_have_no_summary(path, text):
    assert summary_of_source(path, text) is None


def summaries(store: Store) -> dict[str, str]:
    return {str(p): str(t) for p, t in store.query("SELECT path, text FROM summaries")}


def embedded(store: Store, path: str) -> bool:
    return bool(store.query(
        "SELECT 1 FROM summaries WHERE path = ? AND vector IS NOT NULL", (path,)))


@pytest.fixture
def store(isolated_env: Path):
    s = Store.open(isolated_env / "index.db")
    yield s
    s.close()


def test_the_index_keeps_one_summary_per_file_in_step_with_the_file(repo, store, fake_embedder):
    repo.write("pkg/help.py", HELP_PY)
    repo.write("README.md", "# Help\n\nSee help.py.\n")
    indexer = Indexer(store, fake_embedder)
    indexer.index(repo.root, WalkOptions())
    rows = summaries(store)
    assert rows["README.md"] == ""  # a row for every file; prose has no summary
    assert rows["pkg/help.py"].startswith("file pkg/help.py\nModule containing bug report")
    assert embedded(store, "pkg/help.py") and store.count_pending() == 0
    assert any(t.startswith("file pkg/help.py") for t in fake_embedder.embedded_texts)

    # the summary's own vector, outside the checkpoints' KNN table
    assert not store.query("SELECT 1 FROM embeddings e JOIN summaries s ON s.hash = e.hash")

    embedded_before = len(fake_embedder.embedded_texts)
    repo.write("pkg/help.py", HELP_PY.replace("return 0", "return -1"))  # same summary
    indexer.index(repo.root, WalkOptions())
    assert embedded(store, "pkg/help.py")  # its vector carried over, not re-embedded
    assert not any(t.startswith("file pkg/help.py")
                   for t in fake_embedder.embedded_texts[embedded_before:])

    embedded_before = len(fake_embedder.embedded_texts)
    repo.write("pkg/help.py", HELP_PY.replace("def info", "def versions"))
    indexer.index(repo.root, WalkOptions())
    assert "def versions" in summaries(store)["pkg/help.py"]
    assert embedded(store, "pkg/help.py")
    assert any(t.startswith("file pkg/help.py")
               for t in fake_embedder.embedded_texts[embedded_before:])

    (repo.root / "pkg/help.py").unlink()
    indexer.index(repo.root, WalkOptions())
    assert "pkg/help.py" not in summaries(store)


def test_files_indexed_before_summaries_get_theirs_on_the_next_run(repo, store, fake_embedder):
    repo.write("pkg/help.py", HELP_PY)
    indexer = Indexer(store, fake_embedder)
    indexer.index(repo.root, WalkOptions())
    store.db.execute("DELETE FROM summaries")  # an index from before the summaries table
    stats = indexer.index(repo.root, WalkOptions())
    assert stats.files_unchanged == 1 and stats.chunks_embedded == 0  # nothing re-chunked
    assert summaries(store)["pkg/help.py"].startswith("file pkg/help.py")
    assert embedded(store, "pkg/help.py")


def test_a_dry_run_counts_the_summaries_it_would_embed(repo, store, fake_embedder):
    repo.write("pkg/help.py", HELP_PY)
    stats = Indexer(store, fake_embedder).index(repo.root, WalkOptions(), dry_run=True)
    fc = chunk_file("pkg/help.py", HELP_PY, ChunkOptions(), fake_embedder.count_tokens)
    assert stats.chunks_to_embed == len({c.text for c in fc.chunks}) + 1
    assert summaries(store) == {}


RUST_FILE = '''#![feature(rustc_private)]
//! Renders the error code index as Markdown or HTML.

use std::env;

/// Where the output goes.
#[derive(Debug)]
enum OutputFormat {
    HTML,
    Markdown,
}

impl OutputFormat {
    fn from(format: &str) -> OutputFormat {
        OutputFormat::Markdown
    }
}

fn main() {}
'''

C_FILE = '''#include <stdio.h>

/* Parse one header line. */
int parse_header(const char *line) { return 0; }
'''


def test_attributes_and_includes_are_not_comments_and_a_type_is_listed_once():
    rust = summary_of_source("src/main.rs", RUST_FILE)
    assert rust is not None
    assert "feature" not in rust
    assert rust.split("\n")[1] == "Renders the error code index as Markdown or HTML."
    assert rust.count("class OutputFormat") == 1
    assert "class OutputFormat: Where the output goes." in rust
    c = summary_of_source("src/header.c", C_FILE)
    assert c is not None and "include" not in c and "def parse_header" in c


def test_one_summary_text_pending_in_two_repositories_is_embedded_once(tmp_path, store,
                                                                      fake_embedder):
    from tests.conftest import RepoBuilder

    a, b = RepoBuilder(tmp_path / "a" / "app"), RepoBuilder(tmp_path / "b" / "app")
    for r in (a, b):
        r.write("pkg/help.py", HELP_PY)
    indexer = Indexer(store, fake_embedder)
    for r in (a, b):
        indexer.index(r.root, WalkOptions(), embed=False)
    assert store.count_pending() == len(store.pending_chunks()) + 1
    indexer.embed_pending()
    assert sum(t.startswith("file pkg/help.py") for t in fake_embedder.embedded_texts) == 1
    assert len(store.query("SELECT 1 FROM summaries WHERE vector IS NOT NULL")) == 2
