"""How many more texts file summaries add to embed, per tree (phase 1 only, no model).

    .venv/bin/python bench/summary_share.py FOLDER [FOLDER ...]

Indexes each folder into a throw-away index without embedding (`embed=False`) and counts
distinct checkpoint texts, non-empty summaries, and the summaries of files that are a
single checkpoint (where the summary repeats much of what that checkpoint says).
Results: docs/BENCHMARKS.md, "Issue 10 closed".
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from tests.conftest import FakeEmbedder


def main() -> None:
    for root in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(Path(tmp) / "index.db")
            Indexer(store, FakeEmbedder()).index(root, WalkOptions(), embed=False)
            texts = int(store.query("SELECT count(DISTINCT hash) FROM checkpoints")[0][0])
            summaries = int(store.query(
                "SELECT count(*) FROM summaries WHERE text != ''")[0][0])
            single = int(store.query(
                "SELECT count(*) FROM summaries s WHERE text != '' AND "
                "(SELECT count(*) FROM checkpoints c WHERE c.file_id = s.file_id) = 1")[0][0])
            store.close()
        print(f"{root}: {texts} checkpoint texts, {summaries} summaries "
              f"(+{100 * summaries / max(texts, 1):.1f}%), {single} of single-checkpoint files")


if __name__ == "__main__":
    main()
