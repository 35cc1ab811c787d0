"""The typed results of the MCP tools: each tool declares one of these models as its output
schema (`outputSchema` in `tools/list`), and its `structuredContent` validates against it —
refused and failed calls (`isError: true`) included, so a client may validate every result.
Fields that only some outcomes carry are optional; objects may carry more than is listed."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Action = Literal["allow", "rewrite", "block"]


class Finding(BaseModel):
    """What the guard found (errors and warnings; info lines appear only as codes)."""

    code: str = Field(description="finding code, e.g. DIR.REVERSED (docs: Finding codes)")
    severity: Literal["error", "warning", "info"]
    message: str
    hint: str | None = Field(None, description="e.g. the closest declared name")


class QueryError(BaseModel):
    code: str = Field(description="a Neo4j status code")
    message: str


class RepairAttempt(BaseModel):
    """One query the repair loop ran after an empty or failed result."""

    query: str
    source: str = Field(description='"client", "tier1", "relaxation" or a repair plugin')
    code: str | None = Field(description="the diagnosis that produced it")
    outcome: str = Field(description="ROWS, EMPTY, ERROR or BLOCKED")
    rows: int
    error: str | None
    ms: float


class ReadResult(BaseModel):
    """read_cypher, read_sql, read_gremlin: rows and findings, or (isError) why there are
    none: refused by the guard (`refused`, `action`) or failed in the database (`error`)."""

    id: str = Field(description="the query id, for report_outcome")
    query: str | None = Field(description="the query that ran (null: nothing ran)")
    findings: list[Finding]
    codes: list[str] = Field(description="every finding code, info included")
    fields: list[str] | None = None
    rows: list[list[Any]] | None = None
    note: str | None = Field(None, description="rows were cut: how to narrow the query")
    attempts: list[RepairAttempt] | None = None
    refused: bool | None = Field(None, description="true: the guard refused the query")
    action: Action | None = None
    error: QueryError | None = None


class CheckResult(BaseModel):
    """check_query: the verdict on a query that is not run."""

    action: Action
    query: str | None = Field(description="what would run (null: refused)")
    findings: list[Finding]
    codes: list[str]


class PlanError(BaseModel):
    branch: str | None
    code: str
    message: str


class PlanBranch(BaseModel):
    id: str
    action: str = Field(description="allow, rewrite, block, or unchecked")
    query: str | None
    findings: list[dict[str, Any]]


class PlanResult(BaseModel):
    """validate_plan: `valid` is true when nothing needs fixing; `error` (isError) when the
    plan's shape could not be read."""

    valid: bool
    errors: list[PlanError]
    branches: list[PlanBranch]
    error: str | None = None


class Example(BaseModel):
    """A verified query that answered a similar question on this proxy."""

    id: int
    question: str
    query: str
    template: str
    uses: int
    weight: float


class ContextResult(BaseModel):
    """get_context: the grounding text; with a question, examples too."""

    context: str
    examples: list[Example] | None = None


class FeedbackResult(BaseModel):
    """report_outcome: the report was applied (`example`: the example it moved, `weight`:
    its weight now), or (isError) `error` says why not."""

    id: str
    outcome: Literal["correct", "wrong"]
    example: int | None = None
    weight: float | None = None
    error: str | None = None
