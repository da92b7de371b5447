"""`ctxd serve`: the MCP server over stdio or streamable HTTP.

`serve` is a click command (registered on the `ctxd` group by `server/cli/main.py`). It
builds `Settings` (flags > environment > config file > defaults: `MCP_TRANSPORT`,
`MCP_HOST`, `MCP_PORT`, `LOG_LEVEL`, `CTXD_TOKEN`, `ZOEKT_URL`, ...), the use cases (the
daemon's when one runs or can be started, else an in-process `Service`), a `JobManager`
and the server from `server/mcp/tools.py`, then runs the transport until the client goes
away (stdio) or the process is stopped.

Safe by default:
- Logs go to stderr; on stdio, stdout carries nothing but the protocol (the SDK also
  diverts stray writes to fd 1 while it serves).
- HTTP always needs a bearer token (loopback TCP lets every local user in): the
  configured `CTXD_TOKEN` / `server.token`, else one generated into the private home
  (`http_token`), unless `server.auth = "none"` (`--auth none`) says otherwise, with a
  warning. Every HTTP request must carry `Authorization: Bearer <token>` (`BearerAuth`,
  constant-time comparison). The token is static: the 401 says so, and OAuth discovery
  paths answer 404, so MCP clients do not start an OAuth login this server cannot
  complete.
- HTTP binds 127.0.0.1 unless told otherwise; a non-loopback address without a token
  (`--auth none`) is refused unless `--allow-remote` forces it (`check_bind`).
- Over HTTP `index_repository` indexes only the configured `server.allowed_roots`
  (`server.jobs.index_roots`).
- HTTP sessions expire after `server.session_idle_seconds` without a request and are
  capped at `server.max_sessions` (the SDK's knobs); a client that hangs up mid-request is
  one debug line (`QuietDisconnects`), not an ERROR traceback.
- DNS-rebinding protection (Host and Origin checks) is always on (`transport_security`).
- A connection must send a request's headers within 5 s, and at most 256 are held at
  once, so connections that never authenticate are bounded (`server.mcp.http_limits`).

The project it runs in (`server.auto_project`, on by default; `open_project`): started
inside a project (`server.project.find_project`: a work tree, or a folder with a project
manifest) that is not indexed, it indexes it at once as a background job (through the
daemon when it runs, like every other call) and keeps it fresh (the daemon's watcher, else
one of its own for that folder); its tools then answer from that project unless told
`all_repos` or a `repository`. Started elsewhere (`$HOME`, `/`) it indexes nothing. Over
HTTP only a project inside the configured `server.allowed_roots` is taken.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import click
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from ctxd.indexer.errors import ConfigError, CtxdError
from ctxd.server.config import (
    AUTH_MODES,
    LOG_LEVELS,
    TRANSPORTS,
    ServerOptions,
    settings_from_cli,
)
from ctxd.server.daemon import lifecycle
from ctxd.server.jobs import JobManager, validate_request
from ctxd.server.mcp.http_token import HttpToken, how_to_use, http_token
from ctxd.server.mcp.stdio import serve_stdio
from ctxd.server.mcp.tools import build_server
from ctxd.server.project import (
    ProjectScope,
    auto_index_refusal,
    locate_project,
    repository_of,
)
from ctxd.server.service import Service
from ctxd.server.use_cases import UseCases
from ctxd.server.watch.watcher import Watcher, start_watching

log = logging.getLogger("ctxd.serve")

MCP_PATH = "/mcp"
LOOPBACK_NAMES = ("localhost",)


# -- decisions (pure) -------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine."""
    if host.strip("[]").lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(options: ServerOptions) -> None:
    """Refuse to expose the server beyond this machine without a token.

    Raises:
        ConfigError: a non-loopback host, no token, and `allow_remote` not set.
    """
    if options.transport != "http" or is_loopback(options.host) or options.token:
        return
    if options.allow_remote:
        log.warning("serving MCP on %s without a token (allow_remote is set): anyone who can "
                    "reach this port can read the indexed code", options.host)
        return
    raise ConfigError(
        f"refusing to bind {options.host} without a token: the MCP server would be reachable "
        "from other machines with no authentication",
        hint="Drop --auth none (a token is then required: CTXD_TOKEN, or the one generated "
        "in the index home), bind 127.0.0.1 (the default), or pass --allow-remote to force "
        "it.",
        details={"field": "server.host", "value": options.host},
    )


def transport_security(host: str) -> TransportSecuritySettings:
    """Host/Origin checks against DNS rebinding: loopback names always, plus the bound host
    (and this machine's names when bound to every interface)."""
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    if not is_loopback(host):
        if host in ("0.0.0.0", "::", ""):
            hosts += [socket.gethostname(), socket.getfqdn()]
        else:
            hosts.append(f"[{host}]" if ":" in host and not host.startswith("[") else host)
    hosts = list(dict.fromkeys(h for h in hosts if h))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts)],
        allowed_origins=[f"{scheme}://{h}{port}" for h in hosts for scheme in ("http", "https")
                         for port in ("", ":*")],
    )


NO_OAUTH = (
    "This ctxd server does not use OAuth (it has no authorization server and publishes no "
    "OAuth metadata): it expects a static bearer token, the server's CTXD_TOKEN, sent as "
    "`Authorization: Bearer <token>` on every request. Configure your MCP client with that "
    "header (e.g. MCP Inspector: --header \"Authorization: Bearer $CTXD_TOKEN\") instead of "
    "an OAuth login."
)
"""What every refusal says: the 401 body and the answer at OAuth discovery paths."""

OAUTH_PATHS = ("/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server",
               "/.well-known/openid-configuration", "/register", "/authorize", "/token")
"""Where OAuth clients look for metadata (RFC 9728, RFC 8414, OIDC discovery, and the
2025-03-26 default endpoints): answered 404 with `NO_OAUTH`, never 401, so a client's
discovery ends there with a readable reason instead of looping into a login."""


def unauthorized(token_sent: bool) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The 401 for a request without the right token: a JSON-RPC error body that says a
    static bearer token is expected and OAuth is not offered; the challenge HTTP requires
    (RFC 9110 15.5.2) with no `resource_metadata` (there is none), and
    `error="invalid_token"` only when a wrong token was sent (RFC 6750 3.1)."""
    challenge = 'Bearer realm="ctxd"'
    if token_sent:
        challenge += ', error="invalid_token", error_description="wrong bearer token"'
    body = json.dumps({
        "jsonrpc": "2.0", "id": None,
        "error": {"code": -32001,
                  "message": ("Unauthorized: wrong bearer token. " if token_sent
                              else "Unauthorized: missing bearer token. ") + NO_OAUTH,
                  "data": {"auth": "static-bearer-token", "oauth": False,
                           "header": "Authorization: Bearer <CTXD_TOKEN>"}},
    }).encode()
    return 401, [(b"content-type", b"application/json"),
                 (b"www-authenticate", challenge.encode()),
                 (b"content-length", str(len(body)).encode())], body


def no_oauth_metadata() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The 404 at an OAuth discovery path: there is no OAuth here, and what to do."""
    body = json.dumps({"error": "not_found", "error_description": NO_OAUTH}).encode()
    return 404, [(b"content-type", b"application/json"),
                 (b"content-length", str(len(body)).encode())], body


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`
    (constant-time comparison); OAuth discovery paths answer 404 (`no_oauth_metadata`)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if any(path == p or path.startswith(p + "/") for p in OAUTH_PATHS):
            status, headers, body = no_oauth_metadata()
        else:
            status, headers, body = unauthorized(token_sent=bool(given))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer[Any], options: ServerOptions) -> ASGIApp:
    """The streamable-HTTP ASGI app at `/mcp`, behind the token check when one is set;
    idle sessions expire and their number is capped (`server.session_idle_seconds`,
    `server.max_sessions`); without sessions (`stateless_http`) when `options.stateless`,
    so that replicas behind a load balancer can each answer any request."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(options.host),
        host=options.host,
        stateless_http=options.stateless,
        session_idle_timeout=float(options.session_idle_seconds),
        max_sessions=options.max_sessions,
    )
    return BearerAuth(app, options.token) if options.token else app


class QuietDisconnects(logging.Filter):
    """A client that hangs up before its request body arrived makes the SDK log "Error
    handling POST request" at ERROR with a ten-line `ClientDisconnect` traceback: here it
    is one line at debug instead (the client is gone; nothing is wrong with the server)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, ClientDisconnect):
            log.debug("HTTP client disconnected before its request was read (%s)",
                      record.getMessage())
            return False
        # The same disconnect, handed on to the session as an exception and logged again.
        args = record.args if isinstance(record.args, tuple) else ()
        return not any(isinstance(a, Exception) and any(isinstance(x, ClientDisconnect)
                                                        for x in (a, *a.args)) for a in args)


QUIET_LOGGERS = ("mcp.server.streamable_http", "mcp.shared.jsonrpc_dispatcher")
"""The SDK's loggers that report a client's disconnect (as an error, then again)."""


# -- the project it runs in ---------------------------------------------------------------------


def open_project(service: UseCases, jobs: JobManager, options: ServerOptions, cwd: Path
                 ) -> ProjectScope | None:
    """The project this server was started in (module docstring), its index job started
    when it is not indexed yet; None outside a project, or when it may not be taken (over
    HTTP outside `server.allowed_roots`, or a folder indexing refuses: logged)."""
    held = repository_of(service.repo_roots(), cwd)
    root, why = (Path(held[1]), None) if held is not None else locate_project(cwd)
    if root is None and why is not None:
        log.warning("not taking a project: %s; started in %s, this server indexes nothing "
                    "by itself (start it in a folder of your own)", why, cwd)
        return None
    if root is None:
        log.info("started outside any project (%s): indexing nothing by itself", cwd)
        return None
    refused = auto_index_refusal(root, options.transport, options.allowed_roots)
    if refused is not None:
        log.warning("not taking the project this server runs in: %s", refused)
        return None
    if held is not None:
        log.info("project %s: repository %s, already indexed", root, held[0])
        return ProjectScope(root, service.repo_roots)
    try:
        validate_request(service, root, None, None, None)
    except CtxdError as err:
        log.warning("not indexing the project %s: %s", root, err.message)
        return None
    job = jobs.start(root)
    log.info("indexing the project %s in the background (job %s; index_status follows it)",
             root, job.job_id)
    return ProjectScope(root, service.repo_roots, job=job)


# -- running ----------------------------------------------------------------------------------


def configure_logging(level: str) -> None:
    """Everything to stderr (stdout may be the protocol)."""
    logging.basicConfig(
        level=level.upper(), stream=sys.stderr, force=True,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def run_http(server: MCPServer[Any], options: ServerOptions, token: HttpToken) -> None:
    """Serve streamable HTTP until stopped; logs the URL once the port is listening, and
    where the token is and how a client sends it."""
    import uvicorn

    family = socket.AF_INET6 if ":" in options.host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host.strip("[]"), options.port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}",
            hint="Pick another port with --port (MCP_PORT), or stop what is using it.",
            details={"field": "server.port", "value": options.port},
        ) from exc
    sock.listen(128)
    host = f"[{options.host}]" if family == socket.AF_INET6 else options.host
    url = f"http://{host}:{options.port}{MCP_PATH}"
    (log.info if token.source in ("configured", "file") else log.warning)(
        "%s", how_to_use(token, url))
    log.info("ctxd MCP server listening on %s%s", url,
             " (bearer token required)" if options.token else "")
    for name in QUIET_LOGGERS:
        logging.getLogger(name).addFilter(QuietDisconnects())
    from ctxd.server.mcp.http_limits import guarded_protocol

    config = uvicorn.Config(
        http_app(server, options), log_config=None, log_level=options.log_level.lower(),
        access_log=options.log_level.lower() == "debug", lifespan="on",
        # A header deadline and a connection cap (issue 31) that makes room by closing
        # connections that never sent the token first (issue 39).
        http=guarded_protocol(options.token),
    )
    uvicorn.Server(config).run(sockets=[sock])


@click.command()
@click.option("--transport", type=click.Choice(TRANSPORTS),
              help="stdio (default; for MCP clients that launch ctxd) or http "
                   "(streamable HTTP at /mcp). Environment: MCP_TRANSPORT.")
@click.option("--host", help="HTTP bind address (default 127.0.0.1). A non-loopback address "
                             "needs CTXD_TOKEN or --allow-remote. Environment: MCP_HOST.")
@click.option("--port", type=click.IntRange(1, 65535),
              help="HTTP port (default 3000). Environment: MCP_PORT.")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False),
              help="Log verbosity on stderr (default info). Environment: LOG_LEVEL.")
@click.option("--auth", type=click.Choice(AUTH_MODES),
              help="HTTP authentication: token (default: CTXD_TOKEN, else a token generated "
                   "into the index home) or none (any local user can call every tool).")
@click.option("--allow-remote", is_flag=True, default=None,
              help="Allow a non-loopback --host with --auth none (not recommended).")
@click.option("--watch", is_flag=True, help="Keep indexed repositories fresh by watching their "
                                            "files while serving.")
@click.option("--stateless", is_flag=True, default=None,
              help="HTTP without sessions, for several replicas behind a load balancer "
                   "(CTXD_SERVER_STATELESS; see docs/TEAM.md for what it gives up).")
@click.pass_context
def serve(
    ctx: click.Context,
    transport: str | None,
    host: str | None,
    port: int | None,
    log_level: str | None,
    auth: str | None,
    allow_remote: bool | None,
    watch: bool,
    stateless: bool | None,
) -> None:
    """Run the MCP server for coding agents (stdio by default, or streamable HTTP).

    Over HTTP every request must send `Authorization: Bearer <token>`: CTXD_TOKEN, else
    a token generated on the first start into the index home (the log says where).
    Over HTTP only `server.allowed_roots` may be indexed. Logs go to stderr.

    \b
    Examples:
      ctxd serve                                  # stdio, for an MCP client
      CTXD_SERVER_ALLOWED_ROOTS=~/src ctxd serve --transport http --port 3000
      CTXD_STORE_URL=postgresql://ctxd@db/ctxd CTXD_TOKEN=s3cret \\
        ctxd serve --transport http --host 0.0.0.0 --stateless   # a team's replica
    """
    settings = settings_from_cli(ctx.obj, {
        "server.transport": transport, "server.host": host, "server.port": port,
        "server.log_level": log_level.lower() if log_level else None,
        "server.auth": auth, "server.allow_remote": allow_remote,
        "server.stateless": stateless})
    options = settings.server
    configure_logging(options.log_level)
    token = HttpToken("", "none")
    if options.transport == "http":
        token = http_token(options, settings.home)
        options = replace(options, token=token.token)
    check_bind(options)
    # One model, vector matrix and writer per index home: use (or start) the daemon when
    # there may be several clients; in-process otherwise.
    local = Service(settings, long_lived=True)
    if (early := ctx.meta.pop(lifecycle.EARLY_START, None)) is not None:
        early.join(lifecycle.START_TIMEOUT)  # the daemon `ctxd` started before importing us
    client = None if ctx.obj.get("no_daemon") else lifecycle.connect(  # --no-daemon: never
        settings, autostart=settings.daemon.autostart, local=lambda: local,
        note=lambda text: log.warning("%s", text))
    service: UseCases = client or local
    jobs = JobManager(service)
    project = None
    if options.auto_project:
        try:
            project = open_project(service, jobs, options, Path.cwd())
        except CtxdError as err:  # the server still serves every repository
            log.warning("cannot take the project this server runs in: %s", err.message)
    server = build_server(service, jobs, project=project)
    # The daemon watches files itself; here only when this process does the work.
    watcher = start_watching(local, settings) if watch and client is None else None
    if project is not None:
        if client is not None:
            project.watched_by = "daemon"
        else:  # `--watch` watches every repository; else the project alone
            watcher = watcher or Watcher(local, settings.watch, roots=[project.root]).start()
            project.watched_by = "this server"
    local.watcher = watcher
    log.info("ctxd %s: index %s, transport %s%s", server.version, settings.store_location,
             options.transport, " (stateless)" if options.stateless and
             options.transport == "http" else "")
    try:
        if options.transport == "http":
            run_http(server, options, token)
        else:
            run_stdio(server)
    except KeyboardInterrupt:
        log.info("interrupted")
    finally:
        stop_cleanly(jobs, watcher)
        if client is not None:
            client.close()
        local.close()


def is_disconnect(exc: BaseException) -> bool:
    """Whether `exc` only says that the client's end of the pipe is gone."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_disconnect(e) for e in exc.exceptions)
    return isinstance(exc, BrokenPipeError | ConnectionResetError | anyio.BrokenResourceError
                      | anyio.ClosedResourceError)


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve stdio until the client goes away: its stdin closing (EOF) or its stdout
    breaking (the client died) both end the server normally, not as an error. Every
    request is answered, a malformed one too (`server/mcp/stdio.py`)."""
    try:
        anyio.run(serve_stdio, server)
    except (OSError, BaseExceptionGroup) as exc:
        if not is_disconnect(exc):
            raise
        # Nothing more can reach the client; keep exit-time flushes off the broken pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        log.info("client disconnected (stdout closed): stopping")
    else:
        log.info("client disconnected (stdin closed): stopping")


STOP_GRACE_SECONDS = 1.5
"""How long a stopping server waits for its index job and watcher to reach a checkpoint.
An MCP client closes stdin, sends SIGTERM 2 s later and SIGKILL 2 s after that; on a busy
machine one embedding batch can take longer than all of that."""


def stop_cleanly(jobs: JobManager, watcher: Watcher | None,
                 grace: float = STOP_GRACE_SECONDS) -> None:
    """Stop the watcher and the index job at their next checkpoint (the index stays
    consistent; the next run resumes) and wait up to `grace` seconds for them.

    SIGTERM is ignored from here to the exit (an MCP client sends one 2 s after closing
    stdin), so it cannot cut the stop short. When the job or the watcher is still inside a
    step after `grace` (an embedding batch on a loaded machine), the process exits at once
    with status 0 instead of waiting: interpreter teardown under a running model call would
    abort it, and waiting would only earn the client's SIGKILL. Exiting there is as safe as
    a kill: every committed file is whole, the open transaction is never committed, and
    the next index run resumes the rest."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    deadline = time.monotonic() + grace
    stopped = watcher is None or watcher.stop(timeout=grace)
    stopped = jobs.shutdown(wait=max(0.0, deadline - time.monotonic())) and stopped
    if not stopped:
        log.info("the index job is still inside a step: exiting without waiting for it "
                 "(committed files are whole; the next index run resumes the rest)")
        logging.shutdown()  # flush the log before leaving without teardown
        os._exit(0)


