#!/usr/bin/env bash
# The sixth ranking corpus, a held-out MESSY check (bench/ranking_dev6/README.md): dayjs
# (JavaScript: a small core, 37 plugins, 140+ locale files, hand-written .d.ts types, docs
# translated into 11 languages) and humanize (Python: six modules, 35 gettext catalogues),
# at pinned commits, then made messy by make_messy.py (build output, bundles, a vendored
# copy, node_modules, a virtualenv, data files). Paths are scored as <repo>/<path>.
#
#   bench/ranking_dev6/setup_corpus.sh OUT_DIR DAYJS_GIT HUMANIZE_GIT
#
# Each *_GIT is a clone (or bare mirror) holding the commit below:
# https://github.com/iamkun/dayjs, https://github.com/python-humanize/humanize.
# Then: CTXD_EMBEDDING_RUN_BUDGET=0 .venv/bin/ctxd --home HOME index OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
"$here/../checkout_commit.sh" "$2" 0f6c19e3b63bcc3ff74917cb3a60125020c75648 "$out/dayjs"
"$here/../checkout_commit.sh" "$3" c3a124cdeb272d7f63bc0aa66f79c6fbafd2fc6d "$out/humanize"
python3 "$here/make_messy.py" "$out"
