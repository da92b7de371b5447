"""Real private keys for the secret tests, made at test time (never stored in the tree):
with the `cryptography` package, else with `openssl genpkey` in a temporary folder; the
tests that need them skip with the reason when neither is there."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


@functools.cache
def private_keys() -> dict[str, str]:
    """PEM private keys by kind: `rsa` (PKCS#1, `RSA PRIVATE KEY`), `rsa-encrypted`
    (PKCS#1 with `Proc-Type` and `DEK-Info` headers), `ec` (PKCS#8), `ed25519` (PKCS#8,
    the shortest: 64 base64 characters) and `openssh` (ed25519 in OpenSSH's format)."""
    try:
        return _with_cryptography()
    except ImportError:
        pass
    if shutil.which("openssl"):
        return _with_openssl()
    pytest.skip("neither the cryptography package nor openssl is available to make keys")


def _with_cryptography() -> dict[str, str]:
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ed_key = ed25519.Ed25519PrivateKey.generate()
    ec_key = ec.generate_private_key(ec.SECP256R1())

    def pem(key: object, fmt: ser.PrivateFormat,
            enc: ser.KeySerializationEncryption | None = None) -> str:
        out: bytes = key.private_bytes(  # type: ignore[attr-defined]
            ser.Encoding.PEM, fmt, enc or ser.NoEncryption())
        return out.decode()

    return {
        "rsa": pem(rsa_key, ser.PrivateFormat.TraditionalOpenSSL),
        "rsa-encrypted": pem(rsa_key, ser.PrivateFormat.TraditionalOpenSSL,
                             ser.BestAvailableEncryption(b"correct horse")),
        "ec": pem(ec_key, ser.PrivateFormat.PKCS8),
        "ed25519": pem(ed_key, ser.PrivateFormat.PKCS8),
        "openssh": pem(ed_key, ser.PrivateFormat.OpenSSH),
    }


def _with_openssl() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)

        def run(*args: str) -> str:
            subprocess.run(["openssl", *args], check=True, capture_output=True)
            return (out / "key.pem").read_text()

        keys = {
            "rsa": run("genrsa", "-traditional", "-out", str(out / "key.pem"), "2048"),
            "ec": run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                      "-out", str(out / "key.pem")),
            "ed25519": run("genpkey", "-algorithm", "ed25519", "-out", str(out / "key.pem")),
        }
        keys["rsa-encrypted"] = run("genrsa", "-traditional", "-aes256", "-passout",
                                    "pass:correct horse", "-out", str(out / "key.pem"), "2048")
        keys["openssh"] = keys["ed25519"]  # ssh-keygen's format needs ssh-keygen
        return keys


def body(pem: str) -> str:
    """The base64 of a PEM key, its lines joined (headers such as `Proc-Type` left out)."""
    lines = pem.strip().split("\n")[1:-1]
    return "".join(line for line in lines if ":" not in line and line.strip())
