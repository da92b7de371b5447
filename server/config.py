"""Settings: the one reader of config.toml, `CTXD_*` / contract environment variables and flags.

`load_settings(flags, env, config_path)` builds one `Settings` made of the per-layer
option dataclasses (`WalkOptions`, `ChunkOptions`, `EmbedOptions`, `SearchOptions`,
`ServerOptions`, `WatchOptions`, `DaemonOptions`, `StoreOptions`). Lower layers never read the
environment or files.

Precedence, highest first: **flag > environment > config file > default**.

- Config file: `CTXD_CONFIG` if set (it must exist), else `<user config dir>/ctxd/config.toml`
  if present. Sections are `[walk]`, `[chunk]`, `[embedding]`, `[search]`, `[server]`,
  `[watch]`, `[daemon]`, `[store]`; `home` is top-level. `config.example.toml` lists every key with
  its default.
- Environment: the original contract's names (`ZOEKT_URL`, `ZOEKT_TIMEOUT_MS`,
  `MCP_TRANSPORT`, `MCP_HOST`, `MCP_PORT`, `LOG_LEVEL`), `CTXD_HOME`, `CTXD_MODEL`,
  `CTXD_DEVICE`, `CTXD_TOKEN`, and for every key `CTXD_<SECTION>_<KEY>` (e.g.
  `CTXD_WALK_MAX_FILE_SIZE`, `CTXD_STORE_URL`). Lists in the environment are comma-separated.
- Flags: a dict of `"section.key"` (or `"home"`) to value, from the CLI.

Unknown keys and bad values raise `ConfigError` naming the key, the value and where it
came from; the store URL's password is never part of a message (`redact_url`).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from ctxd.indexer.chunk.options import ChunkOptions
from ctxd.indexer.embed_options import EmbedOptions
from ctxd.indexer.errors import ConfigError, ValidationError
from ctxd.indexer.store.location import VECTOR_TYPES, StoreOptions, check_url, redact_url
from ctxd.indexer.walk.options import MAX_FILE_SIZE_LIMIT, WalkOptions
from ctxd.search.models import SearchOptions

TRANSPORTS = ("stdio", "http")
AUTH_MODES = ("token", "none")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """The MCP server (`[server]`)."""

    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 3000
    log_level: str = "info"
    token: str = ""
    """Bearer token every HTTP request must carry; empty = the one generated in the home
    (`http-token`), unless `auth` is `none`."""
    auth: str = "token"
    """HTTP authentication: `token` (every request needs the bearer token) or `none` (any
    local user may call the server: only when told so)."""
    allow_remote: bool = False
    """Allow binding a non-loopback host with `auth = "none"` (not recommended)."""
    allowed_roots: tuple[str, ...] = ()
    """Folders `index_repository` may index. Empty: over stdio the client's roots, else
    the server's working folder; over HTTP none (`server.jobs.index_roots`)."""
    index_wait_seconds: int = 20
    """How long `index_repository` waits before answering with a background job id (short
    enough for MCP clients' usual 60 s request timeout)."""
    auto_project: bool = True
    """`ctxd serve` started inside a project (a work tree, or a folder with a project
    manifest) indexes and watches it in the background when it is not indexed, and its
    tools answer from it unless told `all_repos` or a `repository` (`server.project`).
    Over HTTP only a project inside `allowed_roots` is indexed."""
    session_idle_seconds: int = 600
    """An HTTP session with no request for this long is closed (its client starts a new
    one on its next request, as MCP requires)."""
    max_sessions: int = 100
    """HTTP sessions open at once at most; past it a new one is refused (503) until one
    ends or expires."""
    stateless: bool = False
    """Streamable HTTP without sessions (the SDK's stateless mode): any replica behind a
    load balancer answers any request; no server-to-client stream between requests."""


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """The file watcher (`[watch]`)."""

    debounce_ms: int = 300
    rescan_seconds: int = 300
    """Periodic stat rescan that catches events the OS dropped."""
    force_polling: bool = False


@dataclass(frozen=True, slots=True)
class DaemonOptions:
    """The background daemon (`[daemon]`): `ctxd daemon`, shared by the CLI and `ctxd serve`."""

    autostart: bool = True
    """Start the daemon on the first semantic or hybrid search (and for `ctxd serve`)."""
    idle_minutes: float = 30.0
    """Exit after this many minutes without requests or watched repositories; 0 = never."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything configurable, grouped by the layer that uses it."""

    home: Path
    walk: WalkOptions = field(default_factory=WalkOptions)
    chunk: ChunkOptions = field(default_factory=ChunkOptions)
    embedding: EmbedOptions = field(default_factory=EmbedOptions)
    search: SearchOptions = field(default_factory=SearchOptions)
    server: ServerOptions = field(default_factory=ServerOptions)
    watch: WatchOptions = field(default_factory=WatchOptions)
    daemon: DaemonOptions = field(default_factory=DaemonOptions)
    store: StoreOptions = field(default_factory=StoreOptions)
    config_file: Path | None = None

    @property
    def db_path(self) -> Path:
        """The SQLite index in the home (with a store URL: the home's machine-local files,
        the watcher's and the daemon's, still sit beside where it would be)."""
        return self.home / "index.db"

    @property
    def store_location(self) -> str:
        """Where the index is, fit to show: the SQLite file, or the URL without password."""
        return redact_url(self.store.url) if self.store.url else str(self.db_path)


SECTIONS: dict[str, type[Any]] = {
    "walk": WalkOptions,
    "chunk": ChunkOptions,
    "embedding": EmbedOptions,
    "search": SearchOptions,
    "server": ServerOptions,
    "watch": WatchOptions,
    "daemon": DaemonOptions,
    "store": StoreOptions,
}

CONTRACT_ENV = {
    "CTXD_HOME": "home",
    "CTXD_MODEL": "embedding.model",
    "CTXD_DEVICE": "embedding.device",
    "CTXD_TOKEN": "server.token",
    "ZOEKT_URL": "search.zoekt_url",
    "ZOEKT_TIMEOUT_MS": "search.zoekt_timeout_ms",
    "MCP_TRANSPORT": "server.transport",
    "MCP_HOST": "server.host",
    "MCP_PORT": "server.port",
    "LOG_LEVEL": "server.log_level",
}


def default_home() -> Path:
    """The platform's user data folder for ctxd (e.g. ~/.local/share/ctxd)."""
    return Path(platformdirs.user_data_dir("ctxd", appauthor=False))


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir("ctxd", appauthor=False)) / "config.toml"


def all_keys() -> dict[str, Any]:
    """Every settable key (`section.key`) with its default value."""
    out: dict[str, Any] = {"home": ""}
    for section, cls in SECTIONS.items():
        for f in dataclasses.fields(cls):
            out[f"{section}.{f.name}"] = getattr(cls(), f.name)
    return out


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _parse_bool(value: Any, textual: bool) -> bool:
    if isinstance(value, bool):
        return value
    if textual and value.lower() in _TRUE + _FALSE:
        return bool(value.lower() in _TRUE)
    raise ValueError


def _parse_number(kind: type[int] | type[float]) -> Any:
    def parse(value: Any, textual: bool) -> int | float:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, int) or (kind is float and isinstance(value, float)):
            return kind(value)
        if textual:
            return kind(value)
        raise ValueError

    return parse


def _parse_list(value: Any, textual: bool) -> tuple[str, ...]:
    if textual:
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError


def _parse_str(value: Any, _textual: bool) -> str:
    if isinstance(value, str):
        return value
    raise ValueError


# (type of the default, parser, what the error says is expected); bool before int.
_PARSERS: tuple[tuple[type, Any, str], ...] = (
    (bool, _parse_bool, "true or false"),
    (float, _parse_number(float), "a number"),
    (int, _parse_number(int), "an integer"),
    (tuple, _parse_list, "a list of strings"),
    (str, _parse_str, "a string"),
)


def _coerce(key: str, value: Any, default: Any, source: str) -> Any:
    """Convert `value` to the type of `default`, or raise ConfigError naming the key.

    Strings from the environment or a flag are parsed (`true`, `42`, `a,b`); values
    from the TOML file must already have the right type.
    """
    textual = isinstance(value, str) and (source.startswith("environment") or source == "flag")
    for kind, parse, expected in _PARSERS:
        if isinstance(default, kind):
            try:
                return parse(value, textual)
            except (ValueError, AttributeError):
                raise ConfigError(
                    f"invalid value for {key}: {value!r} ({source}); expected {expected}",
                    hint=f"Fix `{key}` in {source}; see config.example.toml for every key "
                    "and default.",
                    details={"field": key, "value": value, "source": source},
                ) from None
    return value


def _read_file(path: Path) -> dict[str, Any]:
    if path.is_dir():
        raise ConfigError(
            f"config file {path} is a folder, not a file",
            hint="Point CTXD_CONFIG (or --config) at a TOML file, e.g. "
            f"{path / 'config.toml'}; config.example.toml shows every key.",
            details={"field": "CTXD_CONFIG", "value": str(path)},
        )
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not valid UTF-8: byte {exc.object[exc.start]:#04x} at "
            f"offset {exc.start}",
            hint="Save the file as UTF-8 (TOML files are UTF-8 text).",
            details={"field": "CTXD_CONFIG", "value": str(path), "offset": exc.start},
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read config file {path}: {exc.strerror or exc}",
            hint="Check CTXD_CONFIG, or create the file from config.example.toml.",
            details={"field": "CTXD_CONFIG", "value": str(path)},
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML: {exc}",
            hint="Fix the syntax; config.example.toml shows every key.",
            details={"field": "CTXD_CONFIG", "value": str(path)},
        ) from exc


def _flatten_file(data: dict[str, Any], path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    known = all_keys()
    for k, v in data.items():
        if isinstance(v, dict) and k in SECTIONS:
            for sk, sv in v.items():
                out[f"{k}.{sk}"] = sv
        else:
            out[k] = v
    for key in out:
        if key not in known:
            raise ConfigError(
                f"unknown config key {key!r} in {path}",
                hint="Remove it or fix its spelling; config.example.toml lists every key.",
                details={"field": key, "source": str(path)},
            )
    return out


def _env_layer(env: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    out: dict[str, tuple[Any, str]] = {}
    known = all_keys()
    for section in SECTIONS:
        prefix = f"CTXD_{section.upper()}_"
        for name, value in env.items():
            if name.startswith(prefix):
                key = f"{section}.{name[len(prefix):].lower()}"
                if key not in known:
                    raise ConfigError(
                        f"unknown setting {key!r} from environment variable {name}",
                        hint="Unset it or fix its name; config.example.toml lists every key.",
                        details={"field": name, "value": value},
                    )
                out[key] = (value, f"environment variable {name}")
    for name, key in CONTRACT_ENV.items():
        if env.get(name):
            out[key] = (env[name], f"environment variable {name}")
    return out


def _config_path(given: Path | None, env: Mapping[str, str]) -> Path | None:
    """The config file, absolute: `given` (the --config flag), else `CTXD_CONFIG` (which
    must exist), else the user's config file when there is one."""
    path = given
    if path is None and env.get("CTXD_CONFIG"):
        path = Path(env["CTXD_CONFIG"]).expanduser()
        if not path.exists():
            raise ConfigError(
                f"CTXD_CONFIG points at {path}, which does not exist",
                hint="Create it (see config.example.toml) or unset CTXD_CONFIG.",
                details={"field": "CTXD_CONFIG", "value": str(path)},
            )
    if path is None and default_config_path().is_file():
        path = default_config_path()
    return Path(os.path.abspath(path.expanduser())) if path is not None else None


def load_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Build `Settings` from flags, environment, config file and defaults (in that order).

    Raises:
        ConfigError: an unknown key, a bad value, or an unreadable config file.
    """
    env = os.environ if env is None else env
    config_path = _config_path(config_path, env)
    layers: dict[str, tuple[Any, str]] = {}
    if config_path is not None:
        for k, v in _flatten_file(_read_file(config_path), config_path).items():
            layers[k] = (v, f"config file {config_path}")
    layers.update(_env_layer(env))
    known = all_keys()
    for k, v in (flags or {}).items():
        if v is None:
            continue
        if k not in known:
            raise ConfigError(f"unknown setting {k!r}", details={"field": k})
        layers[k] = (v, "flag")
    values: dict[str, Any] = {}
    for key, (raw, source) in layers.items():
        if key != "home":
            values[key] = _coerce(key, raw, known[key], source)
    sections: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        kwargs = {
            f.name: values[f"{section}.{f.name}"]
            for f in dataclasses.fields(cls)
            if f"{section}.{f.name}" in values
        }
        sections[section] = cls(**kwargs)
    home = _home(*layers["home"], config_path) if "home" in layers else default_home()
    settings = Settings(home=home, config_file=config_path, **sections)
    _validate(settings, layers)
    return settings


def _home(raw: Any, source: str, config_path: Path | None) -> Path:
    """The index home, absolute: a relative `home` from the config file is taken from the
    file's folder, one from the environment or a flag from the current folder (so the
    daemon, which runs in `/`, and every client agree on one folder).

    Raises:
        ConfigError: not a path (`home = 5`), or a path that exists and is not a folder.
    """
    if not isinstance(raw, str | Path) or isinstance(raw, bool):
        raise ConfigError(
            f"invalid value for home: {raw!r} ({source}); expected a folder path (a string)",
            hint='Set `home` to a folder, e.g. home = "~/.local/share/ctxd", or leave it out '
            "for the default.",
            details={"field": "home", "value": raw, "source": source},
        )
    if not str(raw):
        return default_home()
    path = Path(raw).expanduser()
    if not path.is_absolute() and config_path is not None and source.startswith("config file"):
        path = config_path.parent / path
    path = Path(os.path.abspath(path))
    if path.exists() and not path.is_dir():
        raise ConfigError(
            f"invalid value for home: {str(raw)!r} ({source}): {path} exists and is not a "
            "folder",
            hint="Point CTXD_HOME (or --home, or `home`) at a folder ctxd may create or "
            "already uses for its index.",
            details={"field": "home", "value": str(raw), "source": source},
        )
    return path


def _rules(s: Settings) -> list[tuple[str, bool, str]]:
    """(key, is the value acceptable, what is expected) for every range/choice check."""
    return [
        ("server.transport", s.server.transport in TRANSPORTS, " or ".join(TRANSPORTS)),
        ("server.log_level", s.server.log_level.lower() in LOG_LEVELS, ", ".join(LOG_LEVELS)),
        ("server.port", 0 < s.server.port < 65536, "a port number 1..65535"),
        ("server.auth", s.server.auth in AUTH_MODES, " or ".join(AUTH_MODES)),
        ("server.session_idle_seconds", s.server.session_idle_seconds >= 1,
         "a number of seconds >= 1"),
        ("server.max_sessions", s.server.max_sessions >= 1, "a number of sessions >= 1"),
        ("embedding.precision", s.embedding.precision in PRECISIONS, ", ".join(PRECISIONS)),
        ("embedding.batch_size", s.embedding.batch_size >= 1, "a positive integer"),
        ("walk.max_file_size", 0 <= s.walk.max_file_size <= MAX_FILE_SIZE_LIMIT,
         f"0 (no limit) .. {MAX_FILE_SIZE_LIMIT} bytes"),
        ("search.keyword_weight", 0.0 <= s.search.keyword_weight <= 10.0,
         "a number between 0 and 10"),
        ("search.rrf_k", s.search.rrf_k >= 1, "a positive integer"),
        ("daemon.idle_minutes", s.daemon.idle_minutes >= 0, "0 (never) or more minutes"),
        ("search.fusion", s.search.fusion in ("fitted", "score", "rrf"),
         "fitted, score or rrf"),
        ("search.lexical_weight", 0.0 <= s.search.lexical_weight <= 10.0,
         "a number between 0 and 10 (0 = no lexical leg in hybrid search)"),
        ("search.summary_weight", 0.0 <= s.search.summary_weight <= 10.0,
         "a number between 0 and 10 (0 = file summaries do not count in hybrid search)"),
        ("search.hybrid_lexical_timeout_ms", s.search.hybrid_lexical_timeout_ms >= 1,
         "a positive number of milliseconds"),
        ("search.zoekt_timeout_ms", s.search.zoekt_timeout_ms >= 1,
         "a positive number of milliseconds"),
        ("search.quantized_above", s.search.quantized_above >= 0,
         "0 (always exact) or a number of vectors"),
        ("chunk.max_tokens", s.chunk.max_tokens >= 1, "a positive number of tokens"),
        ("chunk.target_tokens", s.chunk.target_tokens >= 1, "a positive number of tokens"),
        ("chunk.min_tokens", s.chunk.min_tokens >= 1, "a positive number of tokens"),
        (CHUNK_ORDER, s.chunk.min_tokens <= s.chunk.target_tokens <= s.chunk.max_tokens,
         f"min_tokens ({s.chunk.min_tokens}) <= target_tokens ({s.chunk.target_tokens}) <= "
         f"max_tokens ({s.chunk.max_tokens})"),
        ("chunk.window_overlap_lines", s.chunk.window_overlap_lines >= 0,
         "a number of lines >= 0"),
        ("chunk.parse_budget_ms", s.chunk.parse_budget_ms >= 0,
         "0 (no limit) or a number of milliseconds"),
        ("search.default_limit", 1 <= s.search.default_limit <= 100,
         "a number of results from 1 to 100"),
        ("search.context_lines", 0 <= s.search.context_lines <= 10,
         "a number of lines from 0 to 10"),
        ("search.token_budget", s.search.token_budget >= 200,
         "at least 200 (tokens per page of results)"),
        ("embedding.threads", s.embedding.threads >= 0, "0 (all cores) or a positive integer"),
        ("embedding.run_budget", s.embedding.run_budget >= 0,
         "0 (no limit) or a positive number of checkpoints"),
        ("server.index_wait_seconds", s.server.index_wait_seconds >= 0,
         "a number of seconds >= 0"),
        ("watch.debounce_ms", s.watch.debounce_ms >= 0, "a number of milliseconds >= 0"),
        ("watch.rescan_seconds", s.watch.rescan_seconds >= 0,
         "a number of seconds (0 = no rescans)"),
        ("store.url", check_url(s.store.url) is None,
         check_url(s.store.url) or "a PostgreSQL URL"),
        ("store.vector_type", s.store.vector_type in VECTOR_TYPES, " or ".join(VECTOR_TYPES)),
        ("store.pool_size", s.store.pool_size >= 1, "a positive number of connections"),
    ]


def settings_from_cli(
    obj: Mapping[str, Any] | None, command_flags: Mapping[str, Any] | None = None
) -> Settings:
    """Settings for a CLI command: the `ctxd` group's options (`ctx.obj`: `flags` and
    `config`) plus the command's own flags (None values mean "not given")."""
    obj = obj or {}
    flags = {**obj.get("flags", {}),
             **{k: v for k, v in (command_flags or {}).items() if v is not None}}
    return load_settings(flags, config_path=obj.get("config"))


CHUNK_ORDER = "chunk.*_tokens"
"""The rule over three keys: its error names the one that was set (`_blamed`)."""


def _blamed(key: str, layers: Mapping[str, tuple[Any, str]]) -> str:
    """The key a failed rule's error names: for the order of the chunk sizes, the one
    that was set (a default is never to blame when another value breaks the order)."""
    if key != CHUNK_ORDER:
        return key
    given = [k for k in ("chunk.max_tokens", "chunk.target_tokens", "chunk.min_tokens")
             if k in layers]
    return given[0] if given else "chunk.target_tokens"


def _validate(s: Settings, layers: Mapping[str, tuple[Any, str]]) -> None:
    for rule, ok, expected in _rules(s):
        if not ok:
            key = _blamed(rule, layers)
            value, source = layers.get(key, ("(default)", "default"))
            if key == "store.url":
                value = redact_url(str(value))
            raise ConfigError(
                f"invalid value for {key}: {value!r} ({source}); expected {expected}",
                hint=f"Fix `{key}`; see config.example.toml.",
                details={"field": key, "value": value, "source": source},
            )
    if s.walk == WalkOptions():
        return  # the built-in options are valid; the walker (~70 ms) loads only to check others
    from ctxd.indexer.walk.walker import validate_walk_options  # the walker loads lazily

    try:
        validate_walk_options(s.walk)
    except ValidationError as exc:
        field_name = str(exc.details.get("field", "patterns"))
        raise ConfigError(
            f"{exc.message} in walk.{field_name}: {exc.details.get('pattern', '')!r}",
            hint=exc.hint,
            details={**exc.details, "field": f"walk.{field_name}"},
        ) from exc
