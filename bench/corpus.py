"""The benchmark corpus: the eval-dev repositories (rich, requests, urllib3, jinja2).

`ensure_corpus()` rebuilds `bench/.corpus/corpus` from the pinned sdists with the
eval set's own `setup_corpus.sh` (copied here, since ../shared is read-only) and
returns its path. `eval_dir()` is the eval-dev folder with queries and scorer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".corpus"


def eval_dir() -> Path:
    """../shared/eval-dev next to this checkout (or $CTXD_EVAL_DIR)."""
    env = os.environ.get("CTXD_EVAL_DIR")
    if env:
        return Path(env)
    for base in (HERE.parent.parent / "shared", HERE.parent / "shared"):
        if (base / "eval-dev" / "queries.jsonl").is_file():
            return base / "eval-dev"
    sys.exit("eval-dev not found: set CTXD_EVAL_DIR to the eval-dev folder")


def ensure_corpus() -> Path:
    corpus = WORK / "corpus"
    if (corpus / "rich").is_dir() and (corpus / "jinja2").is_dir():
        return corpus
    WORK.mkdir(parents=True, exist_ok=True)
    shutil.copy(eval_dir() / "setup_corpus.sh", WORK / "setup_corpus.sh")
    env = dict(os.environ, EVAL_SDIST_DIR=str(WORK / "sdists"))
    subprocess.run(["bash", str(WORK / "setup_corpus.sh"), sys.executable], check=True, env=env)
    return corpus
