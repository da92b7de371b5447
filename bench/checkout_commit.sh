#!/usr/bin/env bash
# Check a commit's whole tree out of a clone or bare mirror into DEST, through a temporary
# index (not `git archive`, which leaves out export-ignore paths such as docs/ and tests/).
# Used by the ranking sets' setup_corpus.sh.
#
#   bench/checkout_commit.sh GIT_DIR COMMIT DEST
set -euo pipefail
git_dir=$1 commit=$2 dest=$3
mkdir -p "$dest"
index=$(mktemp -u)
trap 'rm -f "$index"' EXIT
GIT_INDEX_FILE=$index git --git-dir="$git_dir" --work-tree="$dest" read-tree "$commit"
GIT_INDEX_FILE=$index git --git-dir="$git_dir" --work-tree="$dest" checkout-index -a -f
