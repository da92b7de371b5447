"""The build files a repository layout reads (`modules.RepoLayout`): which files they are,
and what a `tsconfig.json`/`jsconfig.json` says (`baseUrl`, `paths`). `go.mod` and
`Cargo.toml` are read by the layout itself. Pure over the texts it is given."""

from __future__ import annotations

import json
import posixpath
import re

__all__ = ["BUILD_ENDS", "is_build_file", "strip_json_comments", "ts_config"]

BUILD_ENDS = ("go.mod", "Cargo.toml", ".json")


def is_build_file(path: str) -> bool:
    """Whether a layout reads the file: `go.mod`, `Cargo.toml`, `tsconfig*.json`,
    `jsconfig*.json`."""
    if not path.endswith(BUILD_ENDS):
        return False
    base = posixpath.basename(path)
    return base in ("go.mod", "Cargo.toml") or (
        base.startswith(("tsconfig", "jsconfig")) and base.endswith(".json"))


def ts_config(path: str, text: str) -> tuple[str, str, dict[str, list[str]]] | None:
    """A tsconfig/jsconfig file's folder, `baseUrl` folder and `paths` (None: not JSON,
    or no `compilerOptions`)."""
    try:
        data = json.loads(strip_json_comments(text))
    except ValueError:
        return None
    opts = data.get("compilerOptions") if isinstance(data, dict) else None
    if not isinstance(opts, dict):
        return None
    folder = posixpath.dirname(path)
    base = posixpath.normpath(posixpath.join(folder, str(opts.get("baseUrl") or ".")))
    base = "" if base == "." else base
    paths = opts.get("paths") if isinstance(opts.get("paths"), dict) else {}
    mapping = {str(k): [str(v) for v in vs] for k, vs in (paths or {}).items()
               if isinstance(vs, list)}
    return folder, base, mapping


def strip_json_comments(text: str) -> str:
    """JSON with comments and trailing commas, as tsconfig files are written, made JSON."""
    text = re.sub(r"(?m)^\s*//.*$", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return re.sub(r",(\s*[}\]])", r"\1", text)
