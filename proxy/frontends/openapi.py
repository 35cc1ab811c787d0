"""The OpenAPI 3.1 description of the HTTP front (`GET /openapi.json`): every operation with
every answer it can give, errors included (400/401/403/404/413/415/421), so a generated
client — or a schema-driven fuzzer — knows each shape."""

from __future__ import annotations

from typing import Any

from query_guard import __version__

_FINDING = {
    "type": "object",
    "required": ["code", "severity", "message", "start", "end"],
    "properties": {
        "code": {"type": "string", "description": "taxonomy code, see docs/codes.md"},
        "severity": {"enum": ["error", "warning", "info"]},
        "message": {"type": "string"},
        "start": {"type": "integer"},
        "end": {"type": "integer"},
        "hint": {"type": "string"},
        "rule": {"type": "string"},
        "fixed": {"type": "boolean"},
    },
}
_VERDICT = {
    "type": "object",
    "required": ["action", "query", "findings"],
    "properties": {
        "action": {"enum": ["allow", "rewrite", "block"]},
        "query": {"type": "string", "description": "the client's text with the fixes applied"},
        "forward": {"type": ["string", "null"], "description": "the text sent to the database"},
        "findings": {"type": "array", "items": {"$ref": "#/components/schemas/Finding"}},
        "attempts": {"type": "array", "items": {"type": "object"}},
        "id": {"type": "string", "description": "the query id, for POST /v1/feedback"},
    },
}
_EXAMPLE = {
    "type": "object",
    "required": ["id", "question", "query", "template", "weight", "uses"],
    "properties": {
        "id": {"type": "integer"}, "question": {"type": "string"}, "query": {"type": "string"},
        "template": {"type": "string"}, "weight": {"type": "number"}, "uses": {"type": "integer"},
    },
}  # fmt: skip
_ERRORS = {
    "type": "object",
    "required": ["errors"],
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "queryGuard": {"$ref": "#/components/schemas/Verdict"},
    },
}
_V2 = {
    "type": "object",
    "required": ["bookmarks"],
    "properties": {
        "data": {
            "type": "object",
            "required": ["fields", "values"],
            "properties": {
                "fields": {"type": "array", "items": {"type": "string"}},
                "values": {"type": "array", "items": {"type": "array"}},
            },
        },
        "bookmarks": {"type": "array", "items": {"type": "string"}},
        "transaction": {
            "type": "object",
            "required": ["id", "expires"],
            "properties": {"id": {"type": "string"}, "expires": {"type": "string"}},
        },
        "queryGuard": {"$ref": "#/components/schemas/Verdict"},
    },
}
_STR = {"type": "string"}
_PLAN = {
    "type": "object",
    "required": ["branches"],
    "properties": {"branches": {"type": "array", "items": {
        "type": "object",
        "required": ["id", "route", "query"],
        "properties": {"id": _STR, "route": _STR, "query": _STR,
                       "depends_on": {"type": "array", "items": _STR}},
    }}},
}  # fmt: skip
_PLAN_ANSWER = {
    "type": "object",
    "required": ["valid", "errors", "branches"],
    "properties": {
        "valid": {"type": "boolean"},
        "errors": {"type": "array", "items": {
            "type": "object", "required": ["branch", "code", "message"],
            "properties": {"branch": {"type": ["string", "null"]}, "code": _STR,
                           "message": _STR},
        }},
        "branches": {"type": "array", "items": {
            "type": "object", "required": ["id", "action", "query", "findings"],
            "properties": {"id": _STR, "query": _STR,
                           "action": {"enum": ["allow", "rewrite", "block", "unchecked"]},
                           "findings": {"type": "array",
                                        "items": {"$ref": "#/components/schemas/Finding"}}},
        }},
    },
}  # fmt: skip
_TYPED = "application/vnd.neo4j.query"
ACCESS_MODES = ("READ", "WRITE")  # the legacy endpoint's Access-Mode header (others: 400)
_ERR = {"$ref": "#/components/schemas/Errors"}
_STATEMENT = {
    "type": "object",
    "required": ["statement"],
    "properties": {
        "statement": {"type": "string", "minLength": 1},  # an empty one is refused
        "parameters": {"type": "object"},
        "accessMode": {"enum": ["Read", "Write"]},
        "question": {"type": "string"},  # the user's question: opt-in and experience
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _v2(description: str) -> dict[str, Any]:
    """A Query API answer: plain JSON, or typed JSON when the client accepts it."""
    schema = {"$ref": "#/components/schemas/QueryResult"}
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}, _TYPED: {"schema": schema}},
    }


def _body(schema: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties}


def _errors(*statuses: str) -> dict[str, Any]:
    """The error answers of an operation; every guarded path may also answer 403 (an `Origin`
    not in `[server] http_cors_origins`), 421 (a `Host` not in `http_allowed_hosts`) and 413
    (body over the size limit)."""
    text = {
        "400": "blocked by the guard, failed in the database, or an invalid request",
        "401": "credentials missing or refused (WWW-Authenticate says which schemes)",
        "404": "no such database or transaction",
        "403": "the request's Origin is not in [server] http_cors_origins",
        "415": "the body was not sent as Content-Type: application/json",
        "421": "the request's Host is not in [server] http_allowed_hosts (DNS rebinding)",
    }
    out = {s: _json(_ERR, text[s]) for s in (*statuses, "403", "421")}
    out["413"] = {
        "description": "the body is larger than [server] http_max_body_bytes",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    }
    return out


def _db(*more: str) -> list[dict[str, Any]]:
    names = ("db", *more)
    return [
        {"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names
    ]


def document() -> dict[str, Any]:
    verdict = {"$ref": "#/components/schemas/Verdict"}
    text = {"content": {"text/plain": {"schema": {"type": "string"}}}}
    params = {"type": "object"}
    return {
        "openapi": "3.1.0",
        "info": {"title": "query-guard", "version": __version__},
        "paths": {
            "/v1/check": {"post": {
                "summary": "The guard's verdict on a query, without executing it",
                "requestBody": _body(_object(
                    {"query": {"type": "string"}, "parameters": params,
                     "language": {"enum": ["cypher", "gremlin", "sql"]}},
                    ["query"],
                )),
                "responses": {"200": _json(verdict, "the verdict"),
                              **_errors("400", "401", "415")},
            }},
            "/v1/query": {"post": {
                "summary": "Guard, repair and execute a Cypher, Gremlin or SQL read",
                "requestBody": _body(_object(
                    {"query": {"type": "string"}, "parameters": params,
                     "question": {"type": "string"},
                     "language": {"enum": ["cypher", "gremlin", "sql"]}},
                    ["query"],
                )),
                "responses": {
                    "200": _json(_object({
                        "fields": {"type": "array", "items": {"type": "string"}},
                        "rows": {"type": "array", "items": {"type": "array"}},
                        "truncated": {"type": "boolean"},
                        "query": {"type": "string"},
                        "queryGuard": verdict,
                    }, ["fields", "rows", "truncated", "query", "queryGuard"]), "the rows"),
                    **_errors("400", "401", "415"),
                },
            }},
            "/v1/schema": {"get": {
                "summary": "The schema catalog the guard uses (null before discovery)",
                "responses": {"200": _json({"type": "object"}, "the catalog"),
                              **_errors("401")},
            }},
            "/v1/context": {"get": {
                "summary": "Grounding context text for an LLM's prompt",
                "parameters": [{"name": "samples", "in": "query", "required": False,
                                "description": "sample values per (label, property), 0-10",
                                "schema": {"type": "integer", "minimum": 0, "maximum": 10}},
                               {"name": "question", "in": "query", "required": False,
                                "description": "the user's question: the answer becomes JSON "
                                               "with examples of verified queries",
                                "schema": {"type": "string"}},
                               {"name": "examples", "in": "query", "required": False,
                                "description": "examples for the question, 0-20 (default 3)",
                                "schema": {"type": "integer", "minimum": 0, "maximum": 20}}],
                "responses": {"200": {"description": "the context (JSON with a question)",
                                      "content": {**text["content"], "application/json": {
                                          "schema": _object({
                                              "context": {"type": "string"},
                                              "examples": {"type": "array", "items": _EXAMPLE},
                                          }, ["context", "examples"])}}},
                              **_errors("400", "401")},
            }},
            "/v1/feedback": {"post": {
                "summary": "Report whether the answer of a query id was right",
                "requestBody": _body(_object({"id": {"type": "string"},
                                              "outcome": {"enum": ["correct", "wrong"]}},
                                             ["id", "outcome"])),
                "responses": {"200": _json(_object({
                                  "id": {"type": "string"}, "outcome": {"type": "string"},
                                  "example": {"type": ["integer", "null"]},
                                  "weight": {"type": "number"}}, ["id", "outcome"]),
                                  "what changed"),
                              **_errors("400", "401", "404", "415")},
            }},
            "/v1/plan/validate": {"post": {
                "summary": "Check a plan's branches (a DAG of queries) without running them",
                "requestBody": _body(_PLAN),
                "responses": {"200": _json(_PLAN_ANSWER, "valid, errors, and each branch's "
                                                         "verdict"),
                              **_errors("400", "401", "415")},
            }},
            "/db/{db}/query/v2": {"post": {
                "summary": "Neo4j Query API v2 (typed JSON with Accept: " + _TYPED + ")",
                "parameters": _db(),
                "requestBody": _body(_STATEMENT),
                "responses": {"202": _v2("data and bookmarks"),
                              **_errors("400", "401", "404", "415")},
            }},
            "/db/{db}/query/v2/tx": {"post": {
                "summary": "Open an explicit transaction (and run the body's statement)",
                "parameters": _db(),
                "requestBody": _body(_object(_STATEMENT["properties"], []), required=False),
                "responses": {"202": _v2("the transaction (and the statement's data)"),
                              **_errors("400", "401", "404", "415")},
            }},
            "/db/{db}/query/v2/tx/{id}": {
                "post": {
                    "summary": "Run a statement in an open transaction",
                    "parameters": _db("id"),
                    "requestBody": _body(_object(_STATEMENT["properties"], []), required=False),
                    "responses": {"202": _v2("the statement's data"),
                                  **_errors("400", "401", "404", "415")},
                },
                "delete": {
                    "summary": "Roll an open transaction back",
                    "parameters": _db("id"),
                    "responses": {"200": _json(_object({"bookmarks": {"type": "array"}},
                                                       ["bookmarks"]), "rolled back"),
                                  **_errors("401", "404")},
                },
            },
            "/db/{db}/query/v2/tx/{id}/commit": {"post": {
                "summary": "Commit an open transaction (after the body's statement, if any)",
                "parameters": _db("id"),
                "requestBody": _body(_object(_STATEMENT["properties"], []), required=False),
                "responses": {"202": _v2("committed"), **_errors("400", "401", "404", "415")},
            }},
            "/db/{db}/tx/commit": {"post": {
                "summary": "Neo4j's legacy transactional endpoint (one transaction)",
                "parameters": [*_db(), {
                    "name": "Access-Mode", "in": "header", "required": False,
                    "description": "READ refuses statements that write",
                    "schema": {"type": "string", "enum": list(ACCESS_MODES)},
                }],
                "requestBody": _body(_object(
                    {"statements": {"type": "array", "items": _STATEMENT}}, ["statements"]
                )),
                "responses": {
                    "200": _json(_object({
                        "results": {"type": "array", "items": _object({
                            "columns": {"type": "array", "items": {"type": "string"}},
                            "data": {"type": "array", "items": {"type": "object"}},
                        }, ["columns", "data"])},
                        "errors": {"type": "array", "items": {"type": "object"}},
                        "queryGuard": {"type": "array", "items": verdict},
                    }, ["results", "errors"]), "results and errors"),
                    **_errors("400", "401", "404", "415"),
                },
            }},
            "/health": {"get": {"summary": "Liveness (never needs credentials)", "security": [{}],
                                "responses": {"200": _json({"type": "object"}, "alive")}}},
            "/ready": {"get": {
                "summary": "Backend reachable and schema loaded (never needs credentials)",
                "security": [{}],
                "responses": {"200": _json(_READY, "ready"),
                              "503": _json(_READY, "not ready: see reason")},
            }},
        },
        # none, or either scheme: which one a proxy wants depends on its configuration
        "security": [{}, {"basic": []}, {"bearer": []}],
        "components": {
            "schemas": {"Finding": _FINDING, "Verdict": _VERDICT, "Errors": _ERRORS,
                        "QueryResult": _V2},
            "securitySchemes": {
                "basic": {"type": "http", "scheme": "basic",
                          "description": "a [server] users account, or the database's "
                                         "(pass-through)"},
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "a token the database accepts (pass-through)"},
            },
        },
    }  # fmt: skip


_READY = {
    "type": "object",
    "required": ["ready"],
    "properties": {
        "ready": {"type": "boolean"},
        "backend": {"type": "boolean"},
        "schema": {"type": "boolean"},
        "reason": {"type": "string"},
    },
}
