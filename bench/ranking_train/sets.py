"""The dev sets the fitted ranking learns from (issue 42): each set's questions and the
prebuilt index (a ctxd home) they are asked of.

A home is built once per corpus (`bench/eval_quality.py --home HOME --corpus ...`, each
set's `setup_corpus.sh`); `--homes DIR` names the folder holding them (`home-<set>`).
A question's repository is the first folder of its first gold file (each index is one
tree whose top folders are the repositories), which is what leave-one-repository-out
cross-validation holds out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent


@dataclass(frozen=True)
class DevSet:
    name: str
    home: str
    """The home's folder name under `--homes`."""
    queries: Path


def _eval_dev() -> Path:
    from bench.corpus import eval_dir

    return eval_dir() / "queries.jsonl"


def dev_sets() -> list[DevSet]:
    """Every set, in a fixed order (new sets are appended here)."""
    out = [
        DevSet("evaldev", "home-evaldev-after", _eval_dev()),
        DevSet("messy", "home-messy-after", _eval_dev()),
        DevSet("docs", "home-docs-after", BENCH / "docs_dev" / "queries.jsonl"),
        DevSet("howto", "home-docs-after", BENCH / "docs_dev" / "howto.jsonl"),
        DevSet("howto_fresh", "home-docs-after", BENCH / "docs_dev" / "howto_fresh.jsonl"),
        DevSet("poly", "home-poly-after", BENCH / "polyglot_dev" / "queries.jsonl"),
        DevSet("poly2", "home-poly2-after", BENCH / "polyglot_dev2" / "queries.jsonl"),
    ]
    dev3 = BENCH / "ranking_dev3" / "queries.jsonl"
    if dev3.is_file():
        out.append(DevSet("dev3", "home-dev3", dev3))
    dev4 = BENCH / "ranking_dev4" / "queries.jsonl"
    if dev4.is_file():
        out.append(DevSet("dev4", "home-dev4", dev4))
    return out


def load_questions(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [r for r in rows if r.get("gold_files")]


def repository_of(question: dict[str, Any]) -> str:
    return str(question["gold_files"][0]).split("/", 1)[0]
