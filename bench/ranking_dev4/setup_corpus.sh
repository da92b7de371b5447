#!/usr/bin/env bash
# The fourth ranking dev corpus (issue 42): plug (Elixir, with its Erlang multipart
# parser and HTTPS guide), lazy.nvim (Lua, with a generated vim help file, a 116,000-line
# luarocks manifest and a generated Lua list of community rocks), Alamofire (Swift, two
# long Markdown guides, four migration guides, a 3,500-line changelog, Xcode projects and
# test certificates), pinia (TypeScript and Vue, a VitePress guide in English and Chinese,
# typedoc-generated API pages in both languages, a playground app and a Nuxt module),
# JavaPoet (Java, a 970-line README that is the guide) and args (Dart) at pinned commits.
# Questions and gold files: queries.jsonl (written by reading the code and docs on
# 2026-11-29, before any search was run on this corpus); paths are scored as
# <repo>/<path>.
#
#   bench/ranking_dev4/setup_corpus.sh OUT_DIR PLUG_GIT LAZY_GIT ALAMOFIRE_GIT PINIA_GIT \
#       JAVAPOET_GIT ARGS_GIT
#
# Each *_GIT is a clone (or bare mirror) holding the commit below. Whole trees are checked
# out through a temporary index (not `git archive`, which honours export-ignore), except
# Alamofire's docs/: jazzy's generated HTML reference, twice (docs/ and a docset copy,
# 341 pages, 48,000 chunks to embed against 13,900 for the rest of the corpus), which
# ctxd before ead1a57 did not recognise as built output and spent hours embedding.
# https://github.com/elixir-plug/plug, folke/lazy.nvim, Alamofire/Alamofire, vuejs/pinia,
# square/javapoet, dart-lang/args.
# Then: CTXD_EMBEDDING_RUN_BUDGET=0 .venv/bin/ctxd --home HOME index OUT_DIR
#       .venv/bin/python bench/ranking_guarantees.py --home HOME \
#           --queries bench/ranking_dev4/queries.jsonl --out RESULT.json
set -euo pipefail
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
names=(plug lazy.nvim alamofire pinia javapoet args)
commits=(a898c454a04ca5ffad306bd751a15c7ac9ff6927 306a05526ada86a7b30af95c5cc81ffba93fef97
         7595cbcf59809f9977c5f6378500de2ad73b7ddb 254eec764ecccd120ab9dbc31352d76ffd6ecfa3
         b9017a9503b76e11b4ad4c1a9f050e2d29112cb0 7a2dfb528768f0a2e5680f711dbfb948f1d6c255)
for i in 0 1 2 3 4 5; do
  "$(dirname "$0")/../checkout_commit.sh" "$1" "${commits[$i]}" "$out/${names[$i]}"
  shift
done
rm -rf "$out/alamofire/docs"
