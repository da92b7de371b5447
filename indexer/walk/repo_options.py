"""A repository's walk options: the ones given explicitly stick to it.

`ctxd index PATH --exclude 'gen/**'` (or `index_repository` with patterns) stores the
options of the run in the repository's row, with the names of those given explicitly
under `explicit`. A later plain refresh (`ctxd index PATH`, `index_repository` without
patterns, a dry run, the watcher) keeps those: `pinned_options(base, stored)` returns
them and `with_options(base, pinned)` lays them over the configured `base`. Options not
given explicitly follow the configuration, so a changed `walk.exclude_patterns` applies
to them at the next run. A row written before `explicit` existed pins what differs
from the configuration.

Pure: values in, values out.

Invariants: only `OPTION_FIELDS` are ever pinned (sensitive-file and ignore-file
settings always come from the configuration); a malformed stored value is ignored,
never raised (the row was written by us; the configuration's value is used instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ctxd.indexer.walk.walker import WalkOptions

__all__ = ["EXPLICIT_KEY", "OPTION_FIELDS", "options_view", "pinned_options", "with_options"]

OPTION_FIELDS = ("include_patterns", "exclude_patterns", "max_file_size")
"""The walk options a run can be given (`--include`, `--exclude`, `--max-file-size`)."""

EXPLICIT_KEY = "explicit"
"""The key of a repository's stored options that lists the options given explicitly."""


def _stored_value(stored: Mapping[str, Any], name: str) -> Any:
    """The stored value of one option in `WalkOptions`' type, or None when malformed."""
    value = stored.get(name)
    if name == "max_file_size":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return tuple(value)
    return None


def pinned_options(base: WalkOptions, stored: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a repository's row that a plain refresh keeps, by field name.

    Args:
        base: the configured walk options.
        stored: the repository's stored options (`RepoRow.options`).
    """
    explicit = stored.get(EXPLICIT_KEY)
    out: dict[str, Any] = {}
    for name in OPTION_FIELDS:
        value = _stored_value(stored, name)
        if value is None:
            continue
        if isinstance(explicit, list):
            if name in explicit:
                out[name] = value
        elif value != getattr(base, name):
            out[name] = value  # a row from before `explicit`: what differs was given
    return out


def with_options(base: WalkOptions, pinned: Mapping[str, Any]) -> WalkOptions:
    """`base` with the pinned options laid over it."""
    return replace(base, **{k: v for k, v in pinned.items() if k in OPTION_FIELDS})


def options_view(base: WalkOptions, stored: Mapping[str, Any]) -> dict[str, Any]:
    """What `status` shows of a repository's options: the ones its next plain refresh
    uses, and which of them were given explicitly (the rest follow the configuration)."""
    pinned = pinned_options(base, stored)
    walk = with_options(base, pinned)
    return {
        "include_patterns": list(walk.include_patterns),
        "exclude_patterns": list(walk.exclude_patterns),
        "max_file_size": walk.max_file_size,
        EXPLICIT_KEY: sorted(pinned),
    }
