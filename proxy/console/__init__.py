"""The operator console (`GET /ui` on the HTTP listener): what the guard did to recent queries,
read from the request path's audit records (`feed`), rendered by Jinja2 (`page`)."""
