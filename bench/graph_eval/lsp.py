"""A minimal Language Server Protocol client over stdio, for pyright's find-references.

    with LspClient(["node", ".../langserver.index.js", "--stdio"], root, settings) as lsp:
        lsp.references(path, line0, col0)   # -> [(absolute path, line0, col0)]

It answers the requests a server makes of its client (`workspace/configuration` from
`settings`, capability registration, progress tokens) and ignores notifications.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlparse


class LspClient:
    def __init__(self, command: list[str], root: Path, settings: dict[str, Any]) -> None:
        self.root = root
        self.settings = settings
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.opened: set[Path] = set()

    def __enter__(self) -> LspClient:
        uri = self.root.as_uri()
        self.request("initialize", {
            "processId": None, "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": self.root.name}],
            "capabilities": {"workspace": {"configuration": True, "workspaceFolders": True}},
        })
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": self.settings})
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired, RuntimeError):
            self.proc.kill()
            self.proc.wait()

    # -- protocol ------------------------------------------------------------------------

    def _send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        self.proc.stdin.flush()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the language server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            key, _, value = line.decode().partition(":")
            if key.lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(self.proc.stdout.read(length))
        return message

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        my_id = self.next_id
        self._send({"jsonrpc": "2.0", "id": my_id, "method": method, "params": params})
        while True:
            msg = self._read()
            if "method" in msg and "id" in msg:  # the server asks us
                self._send({"jsonrpc": "2.0", "id": msg["id"],
                            "result": self._answer(msg["method"], msg.get("params"))})
            elif msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result")

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            out = []
            for item in (params or {}).get("items", []):
                node: Any = self.settings
                for part in (item.get("section") or "").split("."):
                    node = node.get(part, {}) if part and isinstance(node, dict) else node
                out.append(node)
            return out
        return None

    # -- queries -------------------------------------------------------------------------

    def open(self, path: Path) -> None:
        if path in self.opened:
            return
        self.opened.add(path)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": 1,
            "text": path.read_text(encoding="utf-8")}})

    def references(self, path: Path, line0: int, col0: int) -> list[tuple[Path, int, int]]:
        """References of the symbol at (line0, col0), 0-based, the declaration excluded."""
        self.open(path)
        result = self.request("textDocument/references", {
            "textDocument": {"uri": path.as_uri()},
            "position": {"line": line0, "character": col0},
            "context": {"includeDeclaration": False},
        }) or []
        return [(Path(unquote(urlparse(r["uri"]).path)), r["range"]["start"]["line"],
                 r["range"]["start"]["character"]) for r in result]
