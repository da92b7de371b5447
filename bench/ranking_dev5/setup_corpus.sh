#!/usr/bin/env bash
# The fifth ranking dev corpus (issue 42), a small held-out check of the 2026-11-29 ranking
# rules: vConsole 3.9.1 (TypeScript/JavaScript, messy: its committed minified bundle
# dist/vconsole.min.js, a Chinese twin of every document, HTML templates, a 650 KB
# package-lock.json, a PHP demo), chi (Go: router, middleware package, examples, a long
# changelog) and cxxopts (C++: one 3,100-line header, a vendored 18,000-line catch.hpp,
# CMake/meson/bazel builds). Questions and gold files: queries.jsonl (written from the code
# and docs on 2026-11-29 before any search was run on this corpus); paths are scored as
# <repo>/<path>.
#
#   bench/ranking_dev5/setup_corpus.sh OUT_DIR VCONSOLE_GIT CHI_GIT CXXOPTS_GIT
#
# Each *_GIT is a clone (or bare mirror) holding the commit below; whole trees are checked
# out through a temporary index (none of the three marks anything export-ignore).
# https://github.com/Tencent/vConsole (tag v3.9.1, the last commit with dist/ committed),
# go-chi/chi, jarro2783/cxxopts.
# Then: CTXD_EMBEDDING_RUN_BUDGET=0 .venv/bin/ctxd --home HOME index OUT_DIR
#       .venv/bin/python bench/ranking_guarantees.py --home HOME \
#           --queries bench/ranking_dev5/queries.jsonl --out RESULT.json
set -euo pipefail
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
names=(vconsole chi cxxopts)
commits=(954c9df4b6b9df3a0fab519dad5a0389a42263b0 735ae2b87f8c733d616e809ae86e0985c1bc3350
         a3a21b31ef2894b5a802f041f40d51059469a259)
for i in 0 1 2; do
  "$(dirname "$0")/../checkout_commit.sh" "$1" "${commits[$i]}" "$out/${names[$i]}"
  shift
done
