#!/usr/bin/env bash
# The second polyglot dev corpus: axios (JavaScript, with its TypeScript declarations,
# dist/ bundles, examples, a 1,700-line README) and ripgrep (Rust, a workspace of crates)
# at pinned commits, whole. Questions and gold files: queries.jsonl (20, written by
# reading the code on 2026-11-27, before ranking changes were tried on them); paths are
# scored as <repo>/<path>.
#
#   bench/polyglot_dev2/setup_corpus.sh OUT_DIR AXIOS_GIT RIPGREP_GIT
#
# Each *_GIT is a clone (or bare mirror) holding the commit below:
# https://github.com/axios/axios, BurntSushi/ripgrep.
# Then: .venv/bin/python bench/eval_quality.py --corpus OUT_DIR \
#           --queries bench/polyglot_dev2/queries.jsonl --home HOME --first-page 10
set -euo pipefail
out=$1
shift
names=(axios ripgrep)
commits=(23a25af0688d1db2c396deb09229d2271cc24f6c 3fce3b5bb0236da2df6d99672afb8a719642eca7)
for i in 0 1; do
  git_dir=$1
  shift
  mkdir -p "$out/${names[$i]}"
  git -C "$git_dir" archive "${commits[$i]}" | tar -x -C "$out/${names[$i]}"
done
