"""Configuration: precedence, validation, and config.example.toml covering every key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import ConfigError
from ctxd.server.cli.main import main
from ctxd.server.config import all_keys, load_settings

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_file_or_env(tmp_path):
    s = load_settings(env={})
    assert s.walk.max_file_size == 1048576
    assert s.server.host == "127.0.0.1"
    assert s.server.port == 3000
    assert s.search.zoekt_timeout_ms == 30000
    assert s.embedding.model == "all-MiniLM-L6-v2"


def test_precedence_flag_over_env_over_file_over_default(tmp_path):
    cfg = write(tmp_path / "c.toml", "[server]\nport = 4000\nlog_level = 'debug'\n"
                "[walk]\nmax_file_size = 100\n")
    env = {"CTXD_CONFIG": str(cfg), "MCP_PORT": "5000"}
    s = load_settings(env=env)
    assert s.server.port == 5000  # env beats file
    assert s.server.log_level == "debug"  # file beats default
    assert s.walk.max_file_size == 100
    s = load_settings({"server.port": 6000}, env=env)
    assert s.server.port == 6000  # flag beats env
    assert s.search.context_lines == 3  # default


def test_ctxd_home_and_generic_env_names(tmp_path):
    s = load_settings(env={"CTXD_HOME": str(tmp_path / "h"), "CTXD_WALK_EXCLUDE_PATTERNS":
                           "*.log, vendor/**", "CTXD_WALK_USE_GITIGNORE": "false"})
    assert s.home == tmp_path / "h"
    assert s.db_path == tmp_path / "h" / "index.db"
    assert s.walk.exclude_patterns == ("*.log", "vendor/**")
    assert s.walk.use_gitignore is False


def test_unknown_key_in_file_names_the_key(tmp_path):
    cfg = write(tmp_path / "c.toml", "[walk]\nmax_size = 3\n")
    with pytest.raises(ConfigError) as e:
        load_settings(env={"CTXD_CONFIG": str(cfg)})
    assert "walk.max_size" in e.value.message
    assert e.value.details["field"] == "walk.max_size"


def test_unknown_env_setting_names_the_variable():
    with pytest.raises(ConfigError) as e:
        load_settings(env={"CTXD_SERVER_PROT": "1"})
    assert "CTXD_SERVER_PROT" in e.value.details["field"]


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"MCP_PORT": "http"}, "server.port"),
        ({"MCP_PORT": "70000"}, "server.port"),
        ({"MCP_TRANSPORT": "pigeon"}, "server.transport"),
        ({"LOG_LEVEL": "loud"}, "server.log_level"),
        ({"CTXD_WALK_MAX_FILE_SIZE": "20971520"}, "walk.max_file_size"),
        ({"CTXD_WALK_INCLUDE_PATTERNS": "[bad"}, "walk.include_patterns"),
        ({"CTXD_EMBEDDING_PRECISION": "int4"}, "embedding.precision"),
        ({"CTXD_SEARCH_QUANTIZED_ABOVE": "-1"}, "search.quantized_above"),
    ],
)
def test_bad_values_name_key_and_value(env, key):
    with pytest.raises(ConfigError) as e:
        load_settings(env=env)
    assert e.value.details["field"] == key
    assert e.value.code == "validation_error"


def test_wrong_type_in_file(tmp_path):
    cfg = write(tmp_path / "c.toml", "[server]\nport = 'x'\n")
    with pytest.raises(ConfigError, match=r"server\.port"):
        load_settings(env={"CTXD_CONFIG": str(cfg)})


def test_missing_ctxd_config_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(env={"CTXD_CONFIG": str(tmp_path / "nope.toml")})


def test_invalid_toml_is_an_error(tmp_path):
    cfg = write(tmp_path / "c.toml", "[walk\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(env={"CTXD_CONFIG": str(cfg)})


def test_example_config_lists_every_key_with_its_default():
    data = tomllib.loads((ROOT / "config.example.toml").read_text(encoding="utf-8"))
    flat = {}
    for k, v in data.items():
        if isinstance(v, dict):
            flat.update({f"{k}.{sk}": sv for sk, sv in v.items()})
        else:
            flat[k] = v
    keys = all_keys()
    assert set(flat) == set(keys)
    for key, default in keys.items():
        expected = list(default) if isinstance(default, tuple) else default
        assert flat[key] == expected, key


def test_example_config_loads(tmp_path):
    s = load_settings(env={"CTXD_CONFIG": str(ROOT / "config.example.toml")})
    assert s.server.transport == "stdio"


@pytest.mark.parametrize(("text", "key"), [
    ("[search]\ndefault_limit = 1000000000\n", "search.default_limit"),
    ("[search]\ndefault_limit = 0\n", "search.default_limit"),
    ("[search]\ncontext_lines = 50\n", "search.context_lines"),
    ("[search]\ntoken_budget = 10\n", "search.token_budget"),
    ("[embedding]\nthreads = -1\n", "embedding.threads"),
    ("[server]\nindex_wait_seconds = -5\n", "server.index_wait_seconds"),
    ("[watch]\ndebounce_ms = -1\n", "watch.debounce_ms"),
])
def test_out_of_range_values_in_the_file_are_caught_at_load_naming_key_and_file(
    tmp_path, text, key
):
    cfg = write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError) as e:
        load_settings(env={"CTXD_CONFIG": str(cfg)})
    assert e.value.details["field"] == key
    assert e.value.message.startswith(f"invalid value for {key}: ")
    assert f"(config file {cfg})" in e.value.message
    assert e.value.details["source"] == f"config file {cfg}"


def test_a_bad_default_limit_in_the_file_is_not_blamed_on_the_cli_limit(tmp_path):
    cfg = write(tmp_path / "c.toml", "[search]\ndefault_limit = 1000000000\n")
    r = CliRunner().invoke(main, ["--config", str(cfg), "search", "anything"])
    assert r.exit_code == 2
    assert f"invalid value for search.default_limit: 1000000000 (config file {cfg})" in r.stderr
    assert "--limit" not in r.stderr and "limit must be between" not in r.stderr
