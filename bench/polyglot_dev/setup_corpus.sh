#!/usr/bin/env bash
# The polyglot dev corpus: six real repositories in Go, JavaScript, Rust, Java and
# TypeScript at pinned commits, whole (their tests, examples, docs and lockfiles
# included), for "where is the code that does X" questions beside tests kept next to the
# code (x_test.go), folders of examples and inline `mod tests`. Questions and gold files: queries.jsonl, written by
# reading the code (2026-11-27); paths are scored as <repo>/<path>.
#
#   bench/polyglot_dev/setup_corpus.sh OUT_DIR GIN_GIT EXPRESS_GIT COBRA_GIT AXUM_GIT \
#       GSON_GIT KY_GIT
#
# Each *_GIT is a clone (or bare mirror) holding the commit below:
# https://github.com/gin-gonic/gin, expressjs/express, spf13/cobra, tokio-rs/axum,
# google/gson, sindresorhus/ky.
# Then: .venv/bin/python bench/eval_quality.py --corpus OUT_DIR \
#           --queries bench/polyglot_dev/queries.jsonl --home HOME [--first-page 10]
set -euo pipefail
out=$1
shift
names=(gin express cobra axum gson ky)
commits=(dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9 a3714473feb3d2908add734d340e7755fd85e0a3
         adbc8813901bba65827259daa8e22ff94ec1f30e 3d78036dcac289d6c1d54934708acb6a5bd73686
         9835b6f90192f79cdf5300c528fc6212455fb6c1 3419113b48e034fdcf8fa6bd3be3da7b3d0d758f)
for i in 0 1 2 3 4 5; do
  git_dir=$1
  shift
  mkdir -p "$out/${names[$i]}"
  git -C "$git_dir" archive "${commits[$i]}" | tar -x -C "$out/${names[$i]}"
done
