#!/usr/bin/env bash
# The docs-heavy dev corpus (issue 29): a subset of FastAPI at a pinned commit: the
# package, its example code (docs_src/), the English tutorial and advanced guide, and
# three of its translations (de, ja, ru: tutorial + index page).
#
#   bench/docs_dev/setup_corpus.sh GIT_DIR OUT_DIR
#
# GIT_DIR: a clone (or bare mirror) of https://github.com/fastapi/fastapi holding COMMIT.
# OUT_DIR/fastapi/ receives the files; index OUT_DIR (paths are scored as fastapi/...).
set -euo pipefail
COMMIT=c3f316b7e814667e8ee81e03a7330d00ee61e45c
git_dir=$1
out=$2/fastapi
mkdir -p "$out"
git --git-dir="$git_dir" archive "$COMMIT" fastapi docs_src README.md pyproject.toml \
  docs/en/docs/tutorial docs/en/docs/advanced docs/en/docs/index.md \
  docs/de/docs/tutorial docs/de/docs/index.md docs/ja/docs/tutorial docs/ja/docs/index.md \
  docs/ru/docs/tutorial docs/ru/docs/index.md | tar -x -C "$out"
