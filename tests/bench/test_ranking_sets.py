"""bench/ranking_dev3's and ranking_dev4's question sets are well formed (issue 42's
held-out corpora).

No corpus is needed; with RANKING_DEV3_CORPUS (RANKING_DEV4_CORPUS) pointing at a tree
written by the set's setup_corpus.sh, every gold path and symbol range is also checked
there: the range lies in the file, and a symbol given by its name (not a label such as
`reduce/foreach rules`) has that name on its first line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SETS = ("ranking_dev3", "ranking_dev4")
CATEGORIES = {"conceptual", "lexical", "howto", "docs", "tests"}


def _queries(name: str) -> list[dict[str, Any]]:
    lines = (BENCH / name / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _repos(name: str) -> list[str]:
    script = (BENCH / name / "setup_corpus.sh").read_text(encoding="utf-8")
    found = re.search(r"^names=\(([^)]*)\)", script, re.MULTILINE)
    assert found, f"{name}/setup_corpus.sh has no names=(...) line"
    return found.group(1).split()


@pytest.mark.parametrize("name", SETS)
def test_each_question_has_the_eval_dev_fields_and_a_known_category(name: str) -> None:
    queries = _queries(name)
    assert len(queries) >= 100
    ids = [q["id"] for q in queries]
    assert len(ids) == len(set(ids)), "question ids repeat"
    for q in queries:
        assert set(q) <= {"id", "query", "category", "gold_files", "gold_symbols"}, q["id"]
        assert {"id", "query", "category", "gold_files"} <= set(q), q["id"]
        assert q["category"] in CATEGORIES, (q["id"], q["category"])
        assert q["query"].strip() and q["gold_files"], q["id"]


@pytest.mark.parametrize("name", SETS)
def test_gold_paths_name_a_repository_of_the_corpus_and_symbols_a_gold_file(name: str
                                                                           ) -> None:
    repos = set(_repos(name))
    per_repo = dict.fromkeys(repos, 0)
    for q in _queries(name):
        heads = set()
        for path in q["gold_files"]:
            head, _, rest = path.partition("/")
            assert head in repos and rest, (q["id"], path)
            assert ".." not in path.split("/") and not path.startswith("/"), (q["id"], path)
            heads.add(head)
        assert len(heads) == 1, (q["id"], "gold files span repositories")
        per_repo[heads.pop()] += 1
        for sym in q.get("gold_symbols", []):
            assert sym["file"] in q["gold_files"], (q["id"], sym["file"])
            assert 1 <= sym["start_line"] <= sym["end_line"], (q["id"], sym)
    assert min(per_repo.values()) >= 20, per_repo


@pytest.mark.parametrize("name", SETS)
def test_gold_paths_exist_in_the_corpus(name: str) -> None:
    variable = f"{name.upper()}_CORPUS"
    root = os.environ.get(variable)
    if not root:
        pytest.skip(f"{variable} is not set (a tree written by bench/{name}/setup_corpus.sh)")
    for q in _queries(name):
        for path in q["gold_files"]:
            assert (Path(root) / path).is_file(), (q["id"], path)
        for sym in q.get("gold_symbols", []):
            lines = (Path(root) / sym["file"]).read_text(encoding="utf-8").split("\n")
            assert sym["end_line"] <= len(lines), (q["id"], sym)
            if re.fullmatch(r"[\w$.:#!?]+(\(.*\))?", sym["name"]):  # a name, not a label
                last = re.split(r"[.:#]", sym["name"])[-1].split("(")[0]  # `Base#run`: run
                assert last in lines[sym["start_line"] - 1], (q["id"], sym)
