"""A store URL that libpq cannot read, and the secrets a URL may hold (issue 31, item 6).

Through the real CLI (`CliRunner`, no daemon), text and `--json`, with `LOG_LEVEL=debug`
(an internal error would print its traceback there): a malformed URL is a clear error
that names `store.url` and never holds the password. None of these reach a server: libpq
refuses each URL before connecting, or the server at port 1 is not there."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import ConfigError
from ctxd.indexer.store.location import redact_url, scrub
from ctxd.server.cli.main import main

SECRET = "Wrong%ZZpw"


def ctxd(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


@pytest.fixture(autouse=True)
def _no_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXD_NO_DAEMON", "1")
    monkeypatch.setenv("LOG_LEVEL", "debug")


@pytest.mark.parametrize(("url", "secret", "says"), [
    (f"postgresql://u:{SECRET}@/db?host=/tmp", SECRET, "the password percent-encoded"),
    ("postgresql://u@/db?host=/tmp&sslpassword=k3y%ZZpass", "k3y%ZZpass",
     "the value of sslpassword percent-encoded"),
    ("postgresql://u:Sup3rSecret@/db?host=/tmp&bogus_param=1", "Sup3rSecret",
     'invalid URI query parameter: "bogus_param"'),
    ("host=/tmp password='Sup3rSecret dbname=x", "Sup3rSecret",
     "unterminated quoted string"),
    ("host=/tmp sslpassword=Sup3rSecret frobnicate=1", "Sup3rSecret",
     'invalid connection option "frobnicate"'),
])
def test_a_url_libpq_cannot_read_is_a_config_error_without_its_secret(
        url: str, secret: str, says: str) -> None:
    for json_flag in ((), ("--json",)):
        code, out = ctxd("--store", url, "status", *json_flag)
        assert code == 2, out
        assert secret not in out and secret.replace("%ZZ", "") not in out, out
        assert "internal_error" not in out and "Traceback" not in out, out
    code, out = ctxd("--store", url, "status")
    assert out.startswith("error: validation_error: invalid value for store.url: ") and says in out
    code, out = ctxd("--store", url, "status", "--json")
    err = json.loads(out)
    assert err["error"] == "validation_error" and err["details"]["field"] == "store.url"
    assert says in err["message"]


def test_conninfo_raises_a_config_error_that_quotes_no_value() -> None:
    from ctxd.indexer.store.pg.errors import conninfo

    with pytest.raises(ConfigError) as exc:
        conninfo("postgresql://u:Sup3rSecret@/db?host=/tmp&nope=1")
    text = exc.value.message + (exc.value.hint or "") + json.dumps(exc.value.details)
    assert "Sup3rSecret" not in text and '"nope"' in text


def test_sslpassword_is_redacted_everywhere_a_url_is_shown() -> None:
    url = "postgresql://u@127.0.0.1:1/db?sslpassword=Cl13ntKeyPass&connect_timeout=2"
    assert redact_url(url) == "postgresql://u@127.0.0.1:1/db?sslpassword=***&connect_timeout=2"
    assert "Cl13ntKeyPass" not in redact_url("host=h sslpassword=Cl13ntKeyPass")
    assert "Cl13ntKeyPass" not in scrub(f"failed: {url} (Cl13ntKeyPass)", url)
    for json_flag in ((), ("--json",)):
        code, out = ctxd("--store", url, "status", *json_flag)
        assert code == 2 and "cannot reach the team store" in out, out
        assert "Cl13ntKeyPass" not in out and "sslpassword=***" in out, out
