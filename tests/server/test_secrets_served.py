"""Issue 39, items 1, 4, 5 and 11 through the service: what the index keeps of a file
holding a secret is what `file_content` (and `ctxd cat`, the same request) serves and what
lexical search finds: a key in mbedTLS's C layout and a split token masked in code, a
Kubernetes Secret and a compose file refused whole. Real generated keys, a real SQLite
index (fake embedder)."""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.errors import FileRefused
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.indexer.walk.keygen import body, private_keys
from tests.indexer.walk.test_secrets_issue39 import c_macro

_RNG = random.Random(3939)
TOKEN = "gh" + "p_" + "".join(_RNG.choice(string.ascii_letters + string.digits)
                              for _ in range(36))
PASSWORD = "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(20))


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(load_settings({"home": str(tmp_path / "ctxd-home")}), embedder=FakeEmbedder())
    yield svc
    svc.close()


def test_what_is_served_and_searched_is_what_is_indexed(
        service: Service, repo: RepoBuilder) -> None:
    pem = private_keys()["rsa"]
    repo.write("tests/src/certs.c", c_macro(pem))
    repo.write("app/client.py", f'TOKEN = "{TOKEN[:16]}" + "{TOKEN[16:]}"\n\n\n'
               "def client():\n    return TOKEN\n")
    repo.write("k8s/db.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
               f"  password: {base64.b64encode(PASSWORD.encode()).decode()}\n")
    repo.write("docker-compose.yml", "services:\n  db:\n    image: postgres:16\n"
               f"    environment:\n      POSTGRES_PASSWORD: {PASSWORD}\n")
    stats = service.index(repo.root)
    assert sorted(stats.sensitive_files) == ["docker-compose.yml", "k8s/db.yaml"]
    assert sorted(stats.masked_files) == ["app/client.py", "tests/src/certs.c"]
    served = service.file_content("repo", "tests/src/certs.c").content
    assert "mbedtls_test_srv_key" in served and "-----BEGIN RSA PRIVATE KEY-----" in served
    line = body(pem)[64:128]  # the key's second line, as the C file holds it
    assert line not in served and line[:10] not in served
    client = service.file_content("repo", "app/client.py").content
    assert TOKEN[:16] not in client and TOKEN[16:] not in client and "def client" in client
    for rel in ("k8s/db.yaml", "docker-compose.yml"):
        with pytest.raises(FileRefused):
            service.file_content("repo", rel)
    for needle in (line[:24], TOKEN[:16], TOKEN[16:36], PASSWORD):
        assert not service.search(needle, mode="lexical").results, needle
    assert service.search("mbedtls_test_srv_key", mode="lexical").results
