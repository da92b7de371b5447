"""bench/graph_eval's hand-written Go, Rust and C gold is well formed and matches its
source (hand_gold.TARGETS, C_TARGETS), without the corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.graph_eval.corpus import git_dir, pin_named
from bench.graph_eval.hand_gold import C_TARGETS, HERE, TARGETS, _site, build

FIELDS = {"analyser", "archive_sha256", "category", "definition", "language", "name",
          "package", "qualified_name", "references", "repo", "rule", "set", "version"}


def _records(lang: str) -> list[dict[str, Any]]:
    return [json.loads(line)
            for line in (HERE / "gold" / f"{lang}.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("lang", ["go", "rust", "c"])
def test_hand_gold_records_are_well_formed(lang: str) -> None:
    records = _records(lang)
    assert len(records) >= (6 if lang == "c" else 10)
    for r in records:
        assert set(r) == FIELDS, r["qualified_name"]
        pin = pin_named(r["repo"])
        assert (r["language"], r["analyser"], r["set"]) == (lang, "hand", "dev")
        assert (r["version"], r["archive_sha256"]) == (pin.version, pin.sha256)
        assert r["category"] in ("distinctive", "common")
        sites = [(x["path"], x["line"]) for x in r["references"]]
        assert sites and len(sites) == len(set(sites)), r["qualified_name"]
        d = r["definition"]
        assert (d["path"], d["line"]) not in sites
        for x in r["references"]:
            assert x["kind"] in ("import", "call", "reference") and x["by"] == "hand"
            assert x["line"] > 0 and x["column"] > 0


def test_hand_gold_files_match_their_source() -> None:
    written = {(r["repo"], r["qualified_name"]): r for lang in ("go", "rust")
               for r in _records(lang)}
    assert len(written) == len(TARGETS)
    for t in TARGETS:
        r = written[(t["repo"], t["qualified_name"])]
        assert {(p, n) for p, n, _, _ in map(_site, t["references"])} == {
            (x["path"], x["line"]) for x in r["references"]}
        assert _site(t["definition"])[:2] == (r["definition"]["path"],
                                              r["definition"]["line"])
    c = {r["qualified_name"]: r for r in _records("c")}
    assert set(c) == {t["qualified_name"] for t in C_TARGETS}
    for t in C_TARGETS:  # (their sites come from the tree: see the rebuild below)
        r = c[t["qualified_name"]]
        assert _site(t["definition"])[:2] == (r["definition"]["path"],
                                              r["definition"]["line"])
        assert not {(x["path"], x["line"]) for x in r["references"]} & {
            _site(e)[:2] for e in t["exclude"]}


def test_hand_gold_rebuilds_identically_from_the_mirrors(tmp_path: Path) -> None:
    """Every site's line holds the name at the pinned commit (needs the git mirrors)."""
    for repo in {t["repo"] for t in [*TARGETS, *C_TARGETS]}:
        try:
            git_dir(pin_named(repo))
        except SystemExit as e:
            pytest.skip(f"no git mirror here: {e}")
    built = build(tmp_path)
    for lang, records in built.items():
        assert records == _records(lang)
