#!/usr/bin/env bash
# The third ranking dev corpus (issue 42): sinatra (Ruby, with sinatra-contrib and
# rack-protection), jq (C, a messy tree: the manual in YAML for seven versions, a
# generated parser and lexer next to their grammars, a prebuilt man page, vendored
# decNumber with its PDF, release signatures), guzzle (PHP, with its reStructuredText
# guide), serilog (C#, with its test and benchmark projects) and clikt (Kotlin
# multiplatform, with its mkdocs guide, samples and generated .api dumps) at pinned
# commits, whole.
# Questions and gold files: queries.jsonl (written by reading the code and docs on
# 2026-11-28, before any search was run on this corpus); paths are scored as
# <repo>/<path>.
#
#   bench/ranking_dev3/setup_corpus.sh OUT_DIR SINATRA_GIT JQ_GIT GUZZLE_GIT SERILOG_GIT CLIKT_GIT
#
# Each *_GIT is a clone (or bare mirror) holding the commit below. The whole tree is
# checked out through a temporary index, not `git archive`: guzzle marks docs/ and tests/
# export-ignore, and those are part of what is asked about.
# https://github.com/sinatra/sinatra, jqlang/jq, guzzle/guzzle, serilog/serilog, ajalt/clikt.
# Then: CTXD_EMBEDDING_RUN_BUDGET=0 .venv/bin/ctxd --home HOME index OUT_DIR
#       .venv/bin/python bench/ranking_guarantees.py --home HOME \
#           --queries bench/ranking_dev3/queries.jsonl --out RESULT.json
set -euo pipefail
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
names=(sinatra jq guzzle serilog clikt)
commits=(cb22afd7902b566b6eaba6c4ea89739494a65d12 579e6f76cffd7643ba4002a2c3618a5ea710589a
         2779e868a00289e1b1fd854af030c43a06f4bcb4 60935b4d7abad71cf6157b45a10f5c3c65ead527
         fa2e48c54995a88d492f05568a64889d99994877)
for i in 0 1 2 3 4; do
  "$(dirname "$0")/../checkout_commit.sh" "$1" "${commits[$i]}" "$out/${names[$i]}"
  shift
done
