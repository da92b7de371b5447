"""What each walk rule catches on a real tree, and the checkpoints it keeps out (issue 24).

    .venv/bin/python bench/rule_census.py TREE --json after.json --checkpoints
    OTHER_CHECKOUT/.venv/bin/python bench/rule_census.py TREE --json before.json
    .venv/bin/python bench/rule_census.py --compare before.json after.json

Walks TREE with the default walk options and judges every file as `ctxd index` would
(the walk, then `indexer.walk.judge` where the running ctxd has it, else `read_text` and
`classify`, as before issue 24), recording per file what became of it: embedded, kept
for lexical search only with its role and rule, or skipped with its reason.
`--checkpoints` also counts the checkpoints each readable file yields when embedded
(the real chunker with the default model's tokenizer), so `--compare` can say, per
rule, how many files and checkpoints moved between two checkouts' verdicts: what a
rule keeps out of the embeddings (checkpoints before -> 0) or lets in.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def census(tree: Path, checkpoints: bool) -> dict[str, dict[str, Any]]:
    """path -> {"outcome": "embed" | "<role>" | "skip:<reason>", "rule", "checkpoints"}."""
    from ctxd.indexer.models import Skipped
    from ctxd.indexer.walk.textclass import TextRules, VendorDirs, classify
    from ctxd.indexer.walk.walker import WalkOptions, read_text, walk

    opts = WalkOptions()
    try:
        from ctxd.indexer.walk.judge import FileJudge
        judge: Any = FileJudge(tree, opts)
    except ImportError:  # a checkout from before issue 24
        judge = None
    chunk = None
    if checkpoints:
        from ctxd.indexer.embed_options import EmbedOptions
        from ctxd.indexer.embedder import SentenceTransformerEmbedder
        from ctxd.indexer.pipeline import Indexer
        from ctxd.indexer.store.sqlite.store import Store

        store = Store.open(Path(tempfile.mkdtemp(prefix="ctxd-census-")) / "index.db")
        indexer = Indexer(store, SentenceTransformerEmbedder(EmbedOptions()))
        chunk = indexer.chunk
    out: dict[str, dict[str, Any]] = {}
    vendor = VendorDirs(tree)
    rules = TextRules()
    for item in walk(tree, opts):
        if isinstance(item, Skipped):
            out[item.path] = {"outcome": f"skip:{item.reason.value}", "rule": item.detail}
            continue
        text: Any
        if judge is not None:
            judged = judge.judge(item)
            if isinstance(judged, Skipped):
                out[item.path] = {"outcome": f"skip:{judged.reason.value}",
                                  "rule": judged.detail}
                text = read_text(item)
            else:
                text = judged.text
                out[item.path] = {"outcome": judged.role.value or "embed", "rule": judged.why}
        else:
            text = read_text(item)
            if isinstance(text, Skipped):
                out[item.path] = {"outcome": f"skip:{text.reason.value}", "rule": text.detail}
            else:
                role, why = classify(item.path, text, rules, vendor)
                out[item.path] = {"outcome": role.value or "embed", "rule": why}
        if chunk is not None and isinstance(text, str):
            out[item.path]["checkpoints"] = len(chunk(item.path, text)[1])
    return out


def rule_name(rule: str) -> str:
    """A rule's detail without the file-specific part (`lockfile ('*.lock')` ->
    `lockfile`, `holds a GitHub token (line 3)` -> `holds a GitHub token`)."""
    rule = re.sub(r"\s*\((?:line \d+|[^()]*\.map|[^()]*/)\)$", "", rule)
    rule = re.sub(r"^(bundle banner|sensitive pattern|lockfile|minified, bundled or SVG|"
                  r"certificate|generated|vendored third-party code|\d+ bytes >).*", r"\1",
                  rule)
    return re.sub(r"^\d+% of it in lines over.*", "long lines", rule)


def checkpoints_of(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]],
                   path: str) -> int:
    """The checkpoints `path` yields when embedded, from whichever census counted them."""
    for c in (after, before):
        if path in c and c[path].get("checkpoints") is not None:
            return int(c[path]["checkpoints"])
    return 0


def compare(before: dict[str, dict[str, Any]],
            after: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (before outcome -> after outcome, rule): files and the checkpoints they yield
    when embedded."""
    rows: Counter[tuple[str, str, str]] = Counter()
    cps: Counter[tuple[str, str, str]] = Counter()
    for path in sorted(set(before) | set(after)):
        b = before.get(path, {"outcome": "absent", "rule": ""})
        a = after.get(path, {"outcome": "absent", "rule": ""})
        if b["outcome"] == a["outcome"]:
            continue
        key = (b["outcome"], a["outcome"], rule_name(a["rule"] or b["rule"]))
        rows[key] += 1
        cps[key] += checkpoints_of(before, after, path)
    return [{"before": k[0], "after": k[1], "rule": k[2], "files": n, "checkpoints": cps[k]}
            for k, n in sorted(rows.items(), key=lambda kv: -cps[kv[0]])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?", type=Path)
    ap.add_argument("--json", type=Path, help="write the census here")
    ap.add_argument("--checkpoints", action="store_true")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        print("| before | after | rule | files | checkpoints |")
        print("|---|---|---|---|---|")
        for r in compare(before, after):
            print(f"| {r['before']} | {r['after']} | {r['rule']} | {r['files']} | "
                  f"{r['checkpoints']} |")
        totals = {name: sum(checkpoints_of(before, after, p) for p, v in c.items()
                            if v["outcome"] in ("embed", "generated"))
                  for name, c in (("before", before), ("after", after))}
        print(f"\ncheckpoints embedded: before {totals['before']}, after {totals['after']} "
              "(counted where the census has them)")
        return
    result = census(args.tree.resolve(), args.checkpoints)
    counts = Counter(v["outcome"] for v in result.values())
    print(json.dumps(dict(sorted(counts.items())), indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
