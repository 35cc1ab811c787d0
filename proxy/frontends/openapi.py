"""The OpenAPI 3.1 description of the HTTP front (`GET /openapi.json`)."""

from __future__ import annotations

from typing import Any

from proxy import __version__

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
    },
}
_ERRORS = {
    "type": "object",
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "queryGuard": {"$ref": "#/components/schemas/Verdict"},
    },
}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "required": required, "properties": properties}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def document() -> dict[str, Any]:
    verdict = {"$ref": "#/components/schemas/Verdict"}
    errors = {"$ref": "#/components/schemas/Errors"}
    query_props = {"query": {"type": "string"}, "parameters": {"type": "object"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "query-guard", "version": __version__},
        "paths": {
            "/v1/check": {"post": {
                "summary": "The guard's verdict on a query, without executing it",
                "requestBody": _body(
                    {"query": {"type": "string"}, "language": {"enum": ["cypher", "gremlin"]}},
                    ["query"],
                ),
                "responses": {"200": _json(verdict, "the verdict")},
            }},
            "/v1/query": {"post": {
                "summary": "Guard, repair and execute a Cypher read",
                "requestBody": _body(
                    {**query_props, "question": {"type": "string"},
                     "language": {"enum": ["cypher"]}},
                    ["query"],
                ),
                "responses": {
                    "200": _json({"type": "object", "properties": {
                        "fields": {"type": "array", "items": {"type": "string"}},
                        "rows": {"type": "array", "items": {"type": "array"}},
                        "truncated": {"type": "boolean"},
                        "query": {"type": "string"},
                        "queryGuard": verdict,
                    }}, "the rows"),
                    "400": _json(errors, "blocked by the guard, or failed in the database"),
                },
            }},
            "/v1/schema": {"get": {
                "summary": "The schema catalog the guard uses",
                "responses": {"200": _json({"type": "object"}, "the catalog")},
            }},
            "/v1/context": {"get": {
                "summary": "Grounding context text for an LLM's prompt",
                "responses": {"200": {"description": "text",
                                      "content": {"text/plain": {"schema": {"type": "string"}}}}},
            }},
            "/db/{db}/query/v2": {"post": {
                "summary": "Neo4j Query API v2",
                "parameters": [{"name": "db", "in": "path", "required": True,
                                "schema": {"type": "string"}}],
                "requestBody": _body(
                    {"statement": {"type": "string"}, "parameters": {"type": "object"}},
                    ["statement"],
                ),
                "responses": {"202": _json({"type": "object"}, "data and bookmarks"),
                              "400": _json(errors, "blocked or failed")},
            }},
            "/health": {"get": {"summary": "Liveness",
                                "responses": {"200": _json({"type": "object"}, "alive")}}},
            "/ready": {"get": {"summary": "Backend reachable and schema loaded",
                               "responses": {"200": _json({"type": "object"}, "ready"),
                                             "503": _json({"type": "object"}, "not ready")}}},
        },
        "components": {"schemas": {"Finding": _FINDING, "Verdict": _VERDICT, "Errors": _ERRORS}},
    }  # fmt: skip
