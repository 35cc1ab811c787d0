"""LLM repair — the optional tier-2 `guard_repair` plugin (DESIGN §6).

Asks an OpenAI-compatible chat-completions endpoint to fix a query that failed or returned
nothing. The prompt carries the schema with reciprocity notes, the finding taxonomy (§7), the
client's question when it sent one, the failed query, the error or "empty result", and the
literal grounding notes; the reply is read from the `ERROR:` / `CAUSE:` / `FIX:` format
(markdown fences, bold labels and surrounding prose are tolerated). Off unless
`[repair.llm] base_url` is configured::

    [repair.llm]
    base_url = "http://127.0.0.1:8000/v1"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"   # the *name* of the variable holding the key
    timeout_seconds = 20
    max_tokens = 512

It repairs Cypher only: asked about a Gremlin or SQL query (`RepairRequest.language`), it
proposes nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from query_guard.api import GuardContext, RepairCandidate, RepairRequest, SchemaCatalog, hookimpl

TAXONOMY = """\
SYN syntax: SYN.PARSE (unparsable), SYN.FENCE (markdown around the query)
DIR direction: DIR.REVERSED (arrow against the stored direction), DIR.RECIPROCAL (undirected \
pattern over a type stored both ways counts pairs twice), DIR.FLIPPED_ON_EMPTY
SCH schema: SCH.UNKNOWN_REL_TYPE, SCH.UNKNOWN_LABEL, SCH.UNKNOWN_PROPERTY, SCH.NO_PATH
ENT entity: ENT.LITERAL (a literal that is not stored as written)
PAT pattern, AGG aggregation (e.g. AGG.DISTINCT, AGG.GROUPING), FIL filter (e.g. FIL.WRONG_VALUE, \
FIL.MISSING), RET return (e.g. RET.LIMIT, RET.ORDER, RET.COLUMNS)"""

SYSTEM = """\
You repair Cypher queries for a read-only graph database. A query written for the user's \
question failed or returned nothing. Find the most likely mistake and fix it. Use only \
labels, relationship types, directions and properties of the schema; copy stored values \
exactly as the notes give them. Never write data (no CREATE, MERGE, SET, DELETE, REMOVE).

Mistake codes:
{taxonomy}

Answer in exactly this format and nothing else:
ERROR: <one code>
CAUSE: <one sentence>
FIX: <the complete corrected Cypher query>"""

_LABEL = re.compile(r"^[\s>*_#`-]*(ERROR|CAUSE|FIX)\s*[*_]*\s*:\s*[*_]*", re.I | re.M)
_FENCE = re.compile(r"```[ \t]*(?:cypher|sql|neo4j)?[ \t]*\n?(.*?)```", re.S | re.I)
_CODE = re.compile(r"[A-Z]{2,4}\.[A-Z_]+")


@dataclass(frozen=True, slots=True)
class LLMSettings:
    base_url: str
    model: str = "gpt-4o-mini"
    api_key_env: str = ""
    timeout_seconds: float = 20.0
    max_tokens: int = 512


def from_config(repair: Mapping[str, Any]) -> LLMRepair | None:
    """The plugin instance for `[repair]` (None unless `[repair.llm] base_url` is set)."""
    llm = repair.get("llm") or {}
    if not llm.get("base_url"):
        return None
    return LLMRepair(
        LLMSettings(
            base_url=str(llm["base_url"]),
            model=str(llm.get("model", "gpt-4o-mini")),
            api_key_env=str(llm.get("api_key_env", "")),
            timeout_seconds=float(llm.get("timeout_seconds", 20)),
            max_tokens=int(llm.get("max_tokens", 512)),
        )
    )


class LLMRepair:
    """Registered (as `llm_repair`) only when configured; one HTTP call per repair round."""

    name = "llm_repair"

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    @hookimpl
    async def guard_repair(self, request: RepairRequest, ctx: GuardContext) -> Any:
        if request.language != "cypher":  # the prompt, taxonomy and schema are Cypher's
            return None
        messages = build_messages(request, ctx.schema)
        reply = await self.complete(messages)
        return parse_reply(reply)

    async def complete(self, messages: list[dict[str, str]]) -> str:
        """One chat completion; raises on HTTP errors and timeouts (the loop logs and skips)."""
        s = self.settings
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(s.api_key_env, "") if s.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = {
            "model": s.model,
            "messages": messages,
            "max_tokens": s.max_tokens,
            "temperature": 0,
        }
        url = s.base_url.rstrip("/") + "/chat/completions"
        import aiohttp  # only when an endpoint is configured: a serve without one skips ~20 MiB

        timeout = aiohttp.ClientTimeout(total=s.timeout_seconds)
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.post(url, json=body, headers=headers) as response,
        ):
            response.raise_for_status()
            data = await response.json(content_type=None)
        return str(data["choices"][0]["message"]["content"] or "")


# ---------------------------------------------------------------- prompt and reply (pure)


def build_messages(request: RepairRequest, schema: SchemaCatalog | None) -> list[dict[str, str]]:
    parts = ["Schema:", describe_schema(schema)]
    if request.question:
        parts += ["", f"Question: {request.question}"]
    parts += ["", "Failed query:", request.query, "", f"Outcome: {request.failure}"]
    if request.notes:
        parts += ["", "Notes on literals:", *(f"- {n}" for n in request.notes)]
    tried = [a for a in request.attempts if a.query != request.query]
    if tried:
        parts += ["", "Already tried (do not repeat):"]
        parts += [f"- {a.query} -> {a.outcome}" for a in tried[-4:]]
    return [
        {"role": "system", "content": SYSTEM.format(taxonomy=TAXONOMY)},
        {"role": "user", "content": "\n".join(parts)},
    ]


def describe_schema(schema: SchemaCatalog | None) -> str:
    if schema is None:
        return "(unknown: no schema was discovered)"
    lines = [
        f"(:{label} {{{', '.join(sorted(props))}}})"
        for label, props in sorted(schema.nodes.items())
    ]
    for rel in schema.relationships:
        props = f" {{{', '.join(rel.properties)}}}" if rel.properties else ""
        line = f"(:{rel.start})-[:{rel.type}{props}]->(:{rel.end})"
        if rel.start == rel.end:
            if schema.is_reciprocal(rel.type, rel.start):
                line += " — stored in both directions: match it directed (->) or counts double"
            else:
                line += " — stored once per pair: the direction matters"
        lines.append(line)
    return "\n".join(lines)


def parse_reply(text: str) -> RepairCandidate | None:
    """`ERROR:` / `CAUSE:` / `FIX:` from a model's reply; None when it holds no query."""
    if not text or not text.strip():
        return None
    fields: dict[str, str] = {}
    marks = list(_LABEL.finditer(text))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        fields.setdefault(mark.group(1).upper(), text[mark.end() : end].strip())
    fix = fields.get("FIX")
    if fix is None:  # no FIX label: a lone fenced block is the query
        fences = _FENCE.findall(text)
        fix = fences[-1] if fences else None
    if fix is None:
        return None
    fix = _strip_fence(fix)
    if not fix:
        return None
    code_match = _CODE.search(fields.get("ERROR", "").upper())
    cause = fields.get("CAUSE", "").strip("`* ").splitlines()
    return RepairCandidate(
        fix,
        code_match.group(0) if code_match else None,
        cause[0] if cause else None,
        "llm_repair",
    )


def _strip_fence(text: str) -> str:
    fenced = _FENCE.search(text)
    if fenced:
        return fenced.group(1).strip()
    # prose after the query (a blank line, then sentences) is not part of it
    text = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return text.strip().strip("`").strip()
