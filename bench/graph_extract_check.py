"""The code graph's extraction alone: its CPU time over real trees, and whether a change
to `indexer.graph.extract` kept every file's graph exactly as it was.

    .venv/bin/python bench/graph_extract_check.py --tree DIR [--tree DIR ...] \
        [--save ref.pickle | --compare ref.pickle] [--rounds 5] [--plain]

Every file of the trees whose language has graph rules (`indexer.graph.specs.SPECS`) is
parsed once as the chunker parses it (`parse_source`); then the extraction of all of them
(`extract`) and their encoding (`encode`) are timed, process time, the minimum of
`--rounds` passes (the steadiest figure on a busy machine). `--save` writes every file's
graph (`encode`d, with its link keys); `--compare` reads such a file and reports every
file whose graph (decoded: blobs of either format) or link keys differ (the first
differing definition, import or site of each): the check that a faster extraction
records exactly the same facts (over the files of the trees given). Exit status 1 when
any file differs or is missing.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from collections import Counter
from pathlib import Path

from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.chunk.syntax import ParsedSource, parse_source
from ctxd.indexer.graph import decode, encode, graph_of, link_keys
from ctxd.indexer.graph.model import FileGraph
from ctxd.indexer.graph.specs import SPECS

MAX_BYTES = 1_000_000
"""Files larger than this are left out (the indexer skips them too)."""


def parsed_files(trees: list[Path]) -> list[tuple[str, str, ParsedSource]]:
    """(path, language, parse) of every file with graph rules under the trees."""
    out: list[tuple[str, str, ParsedSource]] = []
    for tree in trees:
        for dirpath, dirnames, filenames in os.walk(tree):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                path = Path(dirpath) / fn
                try:
                    if path.stat().st_size > MAX_BYTES:
                        continue
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                language = detect_language(str(path), text)
                if language not in SPECS:
                    continue
                try:
                    parsed = parse_source(language, text)
                except (ValueError, RuntimeError, RecursionError):
                    continue
                if parsed is not None:
                    out.append((str(path), language, parsed))
    return out


def first_difference(old: FileGraph, new: FileGraph) -> str:
    """Where two graphs of one file part (or '' when they are equal)."""
    for what in ("language", "defs", "imports", "sites"):
        a, b = getattr(old, what), getattr(new, what)
        if a == b:
            continue
        if isinstance(a, str):
            return f"language {a!r} != {b!r}"
        for k, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return f"{what}[{k}]: old {x!r} / new {y!r}"
        return f"{what}: old has {len(a)}, new {len(b)}" + (
            f" (new extra {b[len(a)]!r})" if len(b) > len(a) else f" (old extra {a[len(b)]!r})")
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", type=Path, required=True)
    ap.add_argument("--save", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--plain", action="store_true",
                    help="the walk without its fast paths (extract.PLAIN): save a reference "
                         "with it and --compare without, to check the fast paths")
    args = ap.parse_args()
    sys.modules["ctxd.indexer.graph.extract"].PLAIN = args.plain  # type: ignore[attr-defined]
    files = parsed_files(args.tree)
    langs = Counter(lang for _, lang, _ in files)
    print(f"{len(files)} files: " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())))
    extract_s, encode_s = [], []
    graphs: dict[str, tuple[bytes, tuple[str, ...]]] = {}
    for _ in range(max(1, args.rounds)):
        started = time.process_time()
        got = [graph_of(lang, parsed) or FileGraph(lang) for _, lang, parsed in files]
        extract_s.append(time.process_time() - started)
        started = time.process_time()
        blobs = [encode(g) for g in got]
        encode_s.append(time.process_time() - started)
        graphs = {path: (blob, tuple(link_keys(g, path)))
                  for (path, _, _), blob, g in zip(files, blobs, got, strict=True)}
    sites = sum(len(g.sites) for g in got)
    print(f"extract {min(extract_s):.3f} s, encode {min(encode_s):.3f} s (process time, min "
          f"of {len(extract_s)}); {sites} sites")
    if args.save:
        args.save.write_bytes(pickle.dumps(graphs))
        print(f"saved {len(graphs)} graphs to {args.save}")
    if args.compare:
        old: dict[str, tuple[bytes, tuple[str, ...]]] = pickle.loads(args.compare.read_bytes())
        bad = 0
        roots = tuple(str(t) for t in args.tree)
        for path in sorted(set(graphs) | {p for p in old if p.startswith(roots)}):
            if path not in old or path not in graphs:
                print(f"{path}: only in {'new' if path in graphs else 'old'}")
                bad += 1
                continue
            a, b = decode(old[path][0]), decode(graphs[path][0])  # either blob format
            if a is not None and a == b and old[path][1] == graphs[path][1]:
                continue
            bad += 1
            why = (first_difference(a, b) if a is not None and b is not None else
                   "a blob that does not decode") or (
                f"link keys {old[path][1]} != {graphs[path][1]}")
            print(f"{path}: {why}")
        print(f"{len(graphs) - bad} of {len(graphs)} graphs equal, {bad} differ")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
