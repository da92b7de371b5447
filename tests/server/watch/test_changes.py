"""Pure coalescing and diff logic of the watcher (server/changes.py): no files, no clock."""

from __future__ import annotations

from ctxd.indexer.walk.servable import stored_walk_options
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.watch.changes import (
    FULL,
    ChangeAccumulator,
    ChangeSet,
    EventKind,
    FsEvent,
    Stat,
    candidates,
    classify,
    coalesce,
    diff,
    is_under,
    normalize,
    relative_path,
)

C, M, D, MV = EventKind.CREATED, EventKind.MODIFIED, EventKind.DELETED, EventKind.MOVED


def test_repeated_events_for_one_file_collapse_into_one_path():
    events = [FsEvent(C, "src/a.py"), FsEvent(M, "src/a.py"), FsEvent(M, "src/a.py")]
    assert coalesce(events) == ChangeSet(frozenset({"src/a.py"}))


def test_file_rename_marks_old_and_new_path():
    changes = coalesce([FsEvent(MV, "a.py", dest="b.py")])
    assert changes.files == {"a.py", "b.py"}
    assert not changes.dirs


def test_directory_events_become_subtrees_and_absorb_files_inside():
    events = [
        FsEvent(C, "pkg", is_dir=True),
        FsEvent(C, "pkg/a.py"),
        FsEvent(C, "pkg/sub/b.py"),
        FsEvent(M, "other.py"),
    ]
    changes = coalesce(events)
    assert changes.dirs == {"pkg"}
    assert changes.files == {"other.py"}


def test_directory_rename_and_delete_mark_both_subtrees():
    changes = coalesce(
        [FsEvent(MV, "old", is_dir=True, dest="new"), FsEvent(D, "gone", is_dir=True)]
    )
    assert changes.dirs == {"old", "new", "gone"}


def test_events_in_vcs_and_pruned_folders_are_dropped():
    events = [
        FsEvent(M, ".git/index"),
        FsEvent(C, ".git/objects/ab", is_dir=True),
        FsEvent(C, "web/node_modules/x/index.js"),
        FsEvent(C, "node_modules", is_dir=True),
        FsEvent(C, "a/__pycache__/m.cpython-311.pyc"),
        FsEvent(M, ".venv/lib/site.py"),
    ]
    acc = ChangeAccumulator()
    assert not any(acc.add(e) for e in events)
    assert not acc.take()


def test_file_named_like_a_pruned_folder_is_kept():
    assert classify("docs/node_modules", is_dir=False) == ("docs/node_modules", None)


def test_ignore_file_change_re_evaluates_its_folder():
    assert classify(".gitignore", is_dir=False) == (".gitignore", "")
    assert classify("src/.ctxdignore", is_dir=False) == ("src/.ctxdignore", "src")
    assert classify(".git/info/exclude", is_dir=False) == (None, "")
    changes = coalesce([FsEvent(M, "src/.gitignore"), FsEvent(M, "src/x.py")])
    assert changes.dirs == {"src"} and not changes.files


def test_root_ignore_file_change_means_full_re_evaluation():
    changes = coalesce([FsEvent(M, "a.py"), FsEvent(M, ".gitignore"), FsEvent(C, "d", True)])
    assert changes == FULL
    assert changes.full


def test_virtualenv_marker_re_evaluates_the_folder_holding_it():
    assert classify("tools/env/pyvenv.cfg", is_dir=False)[1] == "tools/env"
    assert classify("tools/env/conda-meta", is_dir=True) == (None, "tools/env")


def test_normalize_drops_nested_dirs_and_files_inside_dirs():
    out = normalize({"a/b/c.py", "z.py"}, {"a", "a/b", "ab"})
    assert out.dirs == {"a", "ab"}
    assert out.files == {"z.py"}
    assert normalize({"x"}, {""}) == FULL


def test_is_under_matches_whole_segments():
    assert is_under("a/b.py", "a")
    assert is_under("a", "a")
    assert not is_under("ab/c.py", "a")
    assert is_under("anything", "")


def test_accumulator_take_resets_and_put_back_merges():
    acc = ChangeAccumulator()
    acc.add(FsEvent(M, "a.py"))
    first = acc.take()
    assert first.files == {"a.py"} and not acc
    acc.add(FsEvent(M, "b.py"))
    acc.add_changes(first)
    assert acc.take().files == {"a.py", "b.py"}


def test_relative_path_inside_and_outside_the_root():
    assert relative_path("/r/repo", "/r/repo/src/a.py") == "src/a.py"
    assert relative_path("/r/repo/", "/r/repo") == ""
    assert relative_path("/r/repo", "/r/repo2/a.py") is None
    assert relative_path("/r/repo", "/elsewhere") is None


def test_candidates_expand_dirs_to_stored_and_scanned_paths():
    changes = ChangeSet(frozenset({"x.py"}), frozenset({"old", "new"}))
    stored = ["old/a.py", "old/sub/b.py", "keep/c.py", "x.py"]
    scanned = ["new/a.py", "new/sub/b.py", "keep/c.py"]
    assert candidates(changes, stored, scanned) == {
        "x.py", "old/a.py", "old/sub/b.py", "new/a.py", "new/sub/b.py",
    }


def test_diff_reports_new_changed_and_deleted_but_not_unchanged():
    stored = {"same.py": Stat(10, 1), "edited.py": Stat(10, 1), "gone.py": Stat(5, 1),
              "touched.py": Stat(7, 1)}
    on_disk = {"same.py": Stat(10, 1), "edited.py": Stat(12, 2), "gone.py": None,
               "new.py": Stat(3, 9), "touched.py": Stat(7, 2), "never.py": None}
    out = diff(on_disk.keys(), stored, on_disk)
    assert out.changed == ("edited.py", "new.py", "touched.py")
    assert out.deleted == ("gone.py",)
    assert out.paths == ["edited.py", "gone.py", "new.py", "touched.py"]
    assert len(out) == 4


def test_diff_of_nothing_changed_is_empty():
    stored = {"a.py": Stat(1, 1)}
    out = diff(["a.py", "ignored.log"], stored, {"a.py": Stat(1, 1), "ignored.log": None})
    assert not out
    assert out.paths == []


def test_diff_skips_known_unindexable_file_until_its_stat_changes():
    on_disk = {"logo.png": Stat(100, 5)}
    assert not diff(["logo.png"], {}, on_disk, {"logo.png": Stat(100, 5)})
    assert diff(["logo.png"], {}, {"logo.png": Stat(120, 6)}, {"logo.png": Stat(100, 5)})


def test_diff_deletes_stored_file_now_refused_by_policy():
    out = diff(["build/gen.py"], {"build/gen.py": Stat(1, 1)}, {"build/gen.py": None})
    assert out.deleted == ("build/gen.py",)


def test_stored_walk_options_uses_stored_patterns_over_configured_ones():
    base = WalkOptions(exclude_patterns=("*.tmp",), use_gitignore=False)
    opts = stored_walk_options(base, {"include_patterns": ["*.py"], "exclude_patterns": [],
                                   "max_file_size": 2048, "use_gitignore": True})
    assert opts.include_patterns == ("*.py",)
    assert opts.exclude_patterns == ()
    assert opts.max_file_size == 2048
    assert opts.use_gitignore is False  # from the configuration, as Service.index does
    assert stored_walk_options(base, {}) == base
