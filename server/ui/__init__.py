"""`ctxd ui`: a local web page to search, read and navigate the index (an edge, like the CLI
and the MCP server: it renders what the service's use cases answer).

`app.build_app(service, gate)` is the ASGI app; `security` its guard (host check, session
cookie from the one-time login token, Origin and CSRF on POST, CSP); `results`, `fileview`,
`repos_view` the pages' HTML; `highlight` and `outline` colour and outline a file's text;
`static/` the one script and stylesheet the pages load (no build step).
"""
