#!/usr/bin/env bash
# Index throughput, before vs after, interleaved in one run:
#   bench/index_ab.sh BEFORE_PYTHON AFTER_PYTHON [ROUNDS]
# Each PYTHON is an interpreter whose `ctxd` is the version to time (e.g. a git worktree
# of the older commit with its own venv). Every round indexes the eval corpus
# (bench/corpus.py) into a fresh home with each, alternating, and prints the run's
# duration_ms and counts from `ctxd index --json`.
set -euo pipefail
before=$1 after=$2 rounds=${3:-2}
corpus=$(cd "$(dirname "$0")/.." && .venv/bin/python -c \
  'from bench.corpus import ensure_corpus; print(ensure_corpus())')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for round in $(seq "$rounds"); do
  for side in before after; do
    py=$before; [ "$side" = after ] && py=$after
    CTXD_HOME="$tmp/$side-$round" CTXD_DAEMON_AUTOSTART=false HF_HUB_OFFLINE=1 \
      "$py" -m ctxd.server.cli.main index "$corpus" --json > "$tmp/out.json"
    python3 - "$side" "$round" "$tmp/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[3]))
print(f"{sys.argv[1]} round {sys.argv[2]}: {d['duration_ms'] / 1000:.1f} s, "
      f"{d['checkpoints']} checkpoints, {d['chunks_embedded']} embedded")
PY
  done
done
