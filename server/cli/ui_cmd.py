"""`ctxd ui`: serve the local web page (`server.ui`) until Ctrl-C.

Binds 127.0.0.1 by default on a free port (`--port` for a fixed one), prints the address
with the run's one-time login token on a line of its own, opens the browser unless
`--no-open`. The page's use cases run in the daemon of the index home (started if none
runs, so searches are warm), or in this process with `--no-daemon`. Imported only when run
(`main.LAZY_COMMANDS`): it pulls in uvicorn and Starlette.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import threading
import webbrowser

import click

from ctxd.indexer.errors import ValidationError
from ctxd.server.cli import render
from ctxd.server.cli.group import service_for

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (port 0: a free one).

    Raises:
        ValidationError: the address cannot be bound (in use, not this machine's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValidationError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="Pick another --port (or leave it out for a free one).",
            details={"field": "port", "value": port}) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


@click.command("ui")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on (0: a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback exposes the page (behind its "
              "login token) to the network.")
@click.option("--no-open", is_flag=True, help="Do not open the browser.")
@click.option("--no-daemon", is_flag=True,
              help="Answer in this process; do not use or start the ctxd daemon.")
@click.pass_context
def ui(ctx: click.Context, port: int, host: str, no_open: bool, no_daemon: bool) -> None:
    """Search, read and navigate the index in a browser (a local page).

    Prints the address to open, with a login token good for this run; without the token
    the page answers 401. Runs until Ctrl-C.

    \b
    Example:
      ctxd ui --port 8377 --no-open
    """
    import uvicorn  # here: uvicorn and Starlette load only for this command

    from ctxd.server.ui.app import build_app
    from ctxd.server.ui.security import Gate

    if no_daemon:
        ctx.obj["no_daemon"] = True
    service = service_for(ctx, long_lived=True, autostart=True)
    sock = bind(host, port)
    gate = Gate(host=host, port=sock.getsockname()[1])
    if host not in LOOPBACK:
        render.emit(f"note: listening on {host}:{gate.port}: any machine that can reach it "
                    "can open the page with the token below (searches, files, index "
                    "actions); use --host 127.0.0.1 to keep it on this machine.", err=True)
    render.emit("ctxd ui: open this address (Ctrl-C stops):", err=True)
    render.emit(gate.login_url())
    sys.stdout.flush()
    if not no_open:
        threading.Thread(target=_open, args=(gate.login_url(),), daemon=True).start()
    config = uvicorn.Config(build_app(service, gate), log_level="warning", access_log=False,
                            lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if server.should_exit and not server.started:  # pragma: no cover (bind errors above)
        sys.exit(2)


def _open(url: str) -> None:
    with contextlib.suppress(Exception):
        logging.getLogger("webbrowser").setLevel(logging.ERROR)
        webbrowser.open(url)
