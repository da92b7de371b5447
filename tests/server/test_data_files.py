"""Data files cost no checkpoints (issue 29, items 4 and 5): a Rust tool's tree in real
formats (ripgrep's benchsuite: `raw.csv` rows and `summary` result tables beside the
code, a 150 KB JSON fixture, 150 PNG screenshots and a git-ignored `site/` build).

The tables and the large JSON are kept for lexical search only (named as `data` in the
index report), `ctxd index --dry-run` says how many checkpoints each kind of file yields
and which files yield the most, and the `--json` skip list names every kind of skip
(the ignored `site/` folder) however many images were skipped before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.server.cli.main import main
from tests.conftest import RepoBuilder

SEARCHER = '''//! Searches one file for a pattern and prints the matching lines.

use std::io::{self, BufRead};

/// How a search reports its matches.
pub struct Printer {
    pub line_numbers: bool,
    pub count_only: bool,
}

/// Runs the pattern over every line of the reader and prints the lines that match.
pub fn search<R: BufRead>(pattern: &str, reader: R, printer: &Printer) -> io::Result<u64> {
    let mut count = 0;
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        if line.contains(pattern) {
            count += 1;
            if !printer.count_only {
                if printer.line_numbers {
                    println!("{}:{}", i + 1, line);
                } else {
                    println!("{}", line);
                }
            }
        }
    }
    Ok(count)
}
'''

BENCHMARKS = ("linux_alternates", "linux_literal", "linux_re_literal_suffix",
              "linux_unicode_word", "subtitles_en_literal", "subtitles_ru_alternate")
TOOLS = ("rg (ignore)", "rg (ignore) (mmap)", "ag (ignore)", "git grep (ignore)",
         "ucg (ignore)", "rg (whitelist)")


def raw_csv(rows: int) -> str:
    """ripgrep's benchsuite `raw.csv`: one row per timed command run."""
    out = ["benchmark,warmup_iter,iter,name,command,duration,lines,env"]
    for i in range(rows):
        bench, tool = BENCHMARKS[i % 6], TOOLS[(i // 6) % 6]
        out.append(f"{bench},1,3,{tool},rg -n PM_RESUME_{i % 13} /linux,"
                   f"{0.15 + (i * 37 % 1000) / 10_000:.17f},{16 + i % 50},")
    return "\n".join(out) + "\n"


def summary() -> str:
    """ripgrep's benchsuite `summary`: per benchmark, each tool's mean and deviation."""
    blocks = []
    for b, bench in enumerate(BENCHMARKS * 4):
        head = f"{bench}_{b} (pattern: ERR_SYS|PME_TURN_OFF|LINK_REQ_RST)"
        rows = [f"{tool:<20} {0.1 + (b * 7 + t) % 50 / 100:.3f} +/- {0.001 + t / 1000:.3f} "
                f"(lines: {16 + b})" for t, tool in enumerate(TOOLS)]
        blocks.append("\n".join([head, "-" * len(head), *rows]))
    return "\n\n".join(blocks) + "\n"


def fixture_json() -> str:
    """A recorded API response used as a test fixture (~150 KB)."""
    items = [{"id": i, "name": f"item-{i}", "price": round(i * 1.37, 2),
              "tags": ["alpha", "beta"][: 1 + i % 2], "in_stock": i % 3 == 0}
             for i in range(1500)]
    return json.dumps({"items": items, "total": len(items)}, indent=2) + "\n"


PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06"
       b"\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01"
       b"\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    repo = RepoBuilder(tmp_path_factory.mktemp("issue29-data") / "grepper")
    repo.write("Cargo.toml", '[package]\nname = "grepper"\nversion = "0.1.0"\n')
    repo.write("src/search.rs", SEARCHER)
    repo.write("README.md", "# grepper\n\nSearches files for a pattern, like grep.\n")
    repo.write("benchsuite/runs/2016-09-22-archlinux-cheetah/raw.csv", raw_csv(1610))
    repo.write("benchsuite/runs/2016-09-22-archlinux-cheetah/summary", summary())
    repo.write("tests/fixtures/items.json", fixture_json())
    repo.write("package.json", json.dumps({"name": "grepper-site", "version": "1.0.0"}))
    for i in range(150):
        repo.write_bytes(f"assets/screenshots/shot_{i:03d}.png", PNG)
    repo.write(".gitignore", "site/\n")
    repo.write("site/index.html", "<html><body>built docs</body></html>\n")
    return repo


DATA = {"benchsuite/runs/2016-09-22-archlinux-cheetah/raw.csv",
        "benchsuite/runs/2016-09-22-archlinux-cheetah/summary", "tests/fixtures/items.json"}


def run_cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.output


def test_data_files_are_kept_for_lexical_search_and_the_dry_run_counts_checkpoints(
        tree: RepoBuilder) -> None:
    code, out = run_cli("index", str(tree.root), "--dry-run", "--json")
    assert code == 0, out
    stats = json.loads(out)
    data = {f["path"] for f in stats["not_embedded_files"] if f["role"] == "data"}
    assert data == DATA
    # Only the code, the README and the small manifests are chunked: a handful of
    # checkpoints, not one per CSV row (1,547 for a 1,611-line CSV before).
    by_kind = stats["checkpoints_by_kind"]
    assert set(by_kind) >= {"rust", "markdown", "toml", "json"}, by_kind
    assert sum(by_kind.values()) <= 10, by_kind
    top = [f["path"] for f in stats["top_files"]]
    assert top and not DATA & set(top), top
    assert stats["top_files"][0]["checkpoints"] == max(f["checkpoints"]
                                                       for f in stats["top_files"])
    code, text = run_cli("index", str(tree.root), "--dry-run")
    assert code == 0, text
    assert "checkpoints by kind: " in text and "rust " in text
    assert "most checkpoints: src/search.rs (" in text or "most checkpoints: " in text
    assert "Not embedded (kept for lexical search): 3 (data 3)" in text


def test_the_skip_list_names_every_kind_of_skip_past_the_first_100(tree: RepoBuilder) -> None:
    code, out = run_cli("index", str(tree.root), "--dry-run", "--json")
    assert code == 0, out
    stats = json.loads(out)
    assert stats["files_skipped"]["binary"] == 150
    reasons = {s["reason"] for s in stats["skipped_files"]}
    assert reasons == set(stats["files_skipped"]), (reasons, stats["files_skipped"])
    assert any(s["path"].rstrip("/") == "site" for s in stats["skipped_files"]), [
        s for s in stats["skipped_files"] if s["reason"] != "binary"]
    per_reason = [s["reason"] for s in stats["skipped_files"]]
    assert max(per_reason.count(r) for r in reasons) <= 100


def test_a_data_file_stays_greppable(tree: RepoBuilder, tmp_path: Path) -> None:
    code, out = run_cli("index", str(tree.root))
    assert code == 0, out
    code, out = run_cli("search", "PM_RESUME_7", "--mode", "lexical", "--json")
    assert code == 0, out
    paths = {r["path"] for r in json.loads(out)["results"]}
    assert "benchsuite/runs/2016-09-22-archlinux-cheetah/raw.csv" in paths
