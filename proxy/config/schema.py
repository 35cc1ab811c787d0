"""The configuration file's schema: one strict pydantic model per TOML table.

Every table rejects unknown keys (`extra="forbid"`), values are not coerced (`strict=True`:
`"yes"` is no bool, `1` no bool, `true` no int; an int is accepted where a float is expected),
choices are `Literal`s and ranges `Field` constraints. A key is declared by one line in its
table's model, with its default::

    class GuardTable(Table):
        cache_size: Off = 4096

Adding a key: that one line here, the key with its default and meaning in
`conf/query-guard.toml` (tests/unit/test_config.py keeps the two in step), and the code that reads
it (`config.server["key"]`, …; the test looks for a reader of every key in proxy/ and
plugins/). A `[guard]` or `[limits]` key the pure pipeline needs also gets a `GuardSettings`
field of the same name (proxy/config/load.py fills it by name). Choices: `Literal[...]`; ranges:
`Off`, `Positive`, `Field(ge=…)`; checks across keys or beyond types: a `field_validator`.

`query_guard.config.describe` turns a `ValidationError` into the dotted keys
(`guard.allowed_procedures[2]`) and a message an operator can act on (a misspelt key gets "did
you mean"); proxy/config/load.py adds the file lines.
"""

from __future__ import annotations

import datetime as _dt
import re
import types
import typing
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from query_guard.config.locate import KeyPath

DEFAULT_ALLOWED_PROCEDURES: tuple[str, ...] = (
    "db.labels",
    "db.relationshipTypes",
    "db.propertyKeys",
    "db.schema.*",
    "db.index.fulltext.queryNodes",
    "db.index.fulltext.queryRelationships",
    "db.index.vector.queryNodes",
    "db.index.vector.queryRelationships",
    "db.indexes",
    "db.constraints",
)

Off = Annotated[int, Field(ge=0)]  # a limit; 0 switches it off
Positive = Annotated[int, Field(gt=0)]
Name = Annotated[str, Field(min_length=1)]


class Table(BaseModel):
    """A TOML table: strict, closed, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=False)
    noun: ClassVar[str] = "key"  # what an unknown entry is called in messages


class ServerTable(Table):
    bolt: str = "127.0.0.1:7687"
    http: str = ""
    http_max_body_bytes: Off = 1024 * 1024
    http_cors_origins: list[str] = []
    http_allowed_hosts: list[Name] = []
    console: bool = True  # GET /ui on the HTTP listener (proxy/console/)
    console_queries: Positive = 200
    console_minutes: Positive = 60
    gremlin: str = ""
    advertised_address: str | list[str] = ""
    workers: Positive | Literal["auto"] = 1
    data_dir: str = ".query-guard"
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    users: dict[str, str] = {}

    @field_validator("advertised_address")
    @classmethod
    def _host_ports(cls, value: str | list[str]) -> str | list[str]:
        for address in [value] if isinstance(value, str) else value:
            host, sep, port = address.rpartition(":")
            if address and not (host and sep and port.isdigit() and 0 < int(port) < 65536):
                raise ValueError(f"each address must look like 'host:port', got {address!r}")
        return value


class BackendTable(Table):
    cypher: str = ""
    gremlin: str = ""
    gremlin_data: list[str] = []
    gremlin_graphs: dict[str, str] = {}
    gremlin_user: str = ""
    gremlin_password_env: str = ""
    user: str = ""
    password_env: str = ""
    credentials: Literal["passthrough", "configured"] = "passthrough"
    database: str = ""
    discovery_user: str = ""
    discovery_password_env: str = ""
    databases: list[Name] = []
    tls_verify: bool = True
    tls_ca: str = ""
    sql: str = ""

    @field_validator("gremlin_graphs")
    @classmethod
    def _source_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name == "g":
                raise ValueError(
                    f"{name!r} is not a traversal source name (an identifier other than g, "
                    "which stays the default graph)"
                )
        return value


class GuardTable(Table):
    read_only: bool = True
    max_limit: Off = 10000
    default_limit: Off = Field(1000, validate_default=True)  # checked against max_limit
    allowed_procedures: list[str] = list(DEFAULT_ALLOWED_PROCEDURES)
    allowed_functions: list[str] = []
    sql_allowed_functions: list[str] = []
    reciprocity_threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.9
    schema_file: str = Field("", alias="schema")  # `schema` would shadow BaseModel.schema
    discover_schema: bool = True
    schema_ttl_seconds: int = 600
    disable: list[str] = []
    cache_size: Off = 4096
    on_rule_error: Literal["warn", "block"] = "warn"
    sql_dialect: str = "postgres"
    cypher_version: Literal["5", "25"] = "5"

    @field_validator("default_limit")
    @classmethod
    def _within_max(cls, value: int, info: ValidationInfo) -> int:
        cap = info.data.get("max_limit", 0)
        if value and cap and value > cap:
            raise ValueError(f"must not exceed guard.max_limit ({cap}), got {value}")
        return value

    @field_validator("cypher_version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) else value  # `cypher_version = 25` too

    @field_validator("sql_dialect")
    @classmethod
    def _known_dialect(cls, value: str) -> str:
        from sqlglot.dialects.dialect import Dialect

        try:
            Dialect.get_or_raise(value)
        except ValueError as exc:
            raise ValueError(str(exc).split("\n")[0]) from None
        return value


class AuditTable(Table):
    path: str = ""
    include_parameters: bool = False


class CompatTable(Table):
    procedures: Literal["proxy", "backend"] = "proxy"
    schema_statements: Literal["error", "acknowledge"] = "error"
    schema_max_age_seconds: Annotated[float, Field(ge=0.0)] = 60.0


class RepairLLMTable(Table):
    """`[repair.llm]`: the optional LLM repair plugin (plugins/llm_repair.py); off without
    base_url."""

    base_url: str = ""
    model: str = "gpt-4o-mini"
    api_key_env: str = ""
    timeout_seconds: Annotated[float, Field(gt=0)] = 20.0
    max_tokens: Positive = 512


class RepairTable(Table):
    enabled: bool = True
    budget: Off = 3
    tier1: bool = True
    grounding: bool = True
    relaxation: bool = True
    speculative: Literal["suggest", "apply"] = "suggest"
    llm: RepairLLMTable | None = None


class EmbeddingsTable(Table):
    """`[experience.embeddings]`: optional semantic ranking (proxy/experience/embeddings.py);
    off without base_url."""

    base_url: str = ""
    model: str = "text-embedding-3-small"
    api_key_env: str = ""
    timeout_seconds: Annotated[float, Field(gt=0)] = 10.0


class ExperienceTable(Table):
    """`[experience]`: the library of verified runs (DESIGN §10, proxy/experience/)."""

    enabled: bool = True
    store: str = ""  # a SQLite file or postgresql://…; "" = experience.sqlite3 in data_dir
    max_examples: Off = 10_000  # per database; 0 = unbounded
    half_life_hours: Annotated[float, Field(ge=0.0)] = 168.0  # 0 = weights never decay
    store_literals: bool = True
    embeddings: EmbeddingsTable | None = None

    @field_validator("store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        schemes = ("sqlite:///", "postgresql://", "postgres://")
        if "://" in value and not value.startswith(schemes):
            raise ValueError(
                f"must be a SQLite file (a path or sqlite:///path) or a PostgreSQL URL "
                f"(postgresql://user@host:port/db), got {value!r}"
            )
        return value


class ContextTable(Table):
    """`[context]`: the grounding context (`/v1/context`, MCP get_context)."""

    max_tokens: Off = 1500  # the schema part's budget (~4 characters a token); 0 = unbounded


class LimitsTable(Table):
    """Resource limits (issue 8); 0 switches one off. Read by plugins/resource_limits.py
    (text), the Bolt front (parameters, messages, results, connections, guard budget) and the
    backends."""

    max_query_bytes: Off = 64 * 1024
    max_nesting: Off = 12
    max_query_tokens: Off = 2000
    max_range_size: Off = 1_000_000
    max_parameters: Off = 100
    max_parameter_bytes: Off = 1024 * 1024
    max_parameter_depth: Off = 8
    max_message_elements: Off = 100_000
    max_result_rows: Annotated[int, Field(ge=-1)] = -1  # -1 = [guard] max_limit
    max_result_bytes: Off = 256 * 1024 * 1024
    query_timeout_ms: Off = 30_000
    max_abandoned_queries: Off = 2
    guard_timeout_ms: Off = 5_000
    guard_workers: Annotated[int, Field(ge=1)] = 2
    cache_bytes: Off = 64 * 1024 * 1024
    cache_max_query_bytes: Off = 16 * 1024
    idle_timeout_seconds: Annotated[float, Field(ge=0.0)] = 600.0
    max_connections: Off = 1000
    max_connections_per_client: Off = 200


class PlanTable(Table):
    """`[plan]`: plan validation (proxy/guard/plan.py): named routes -> language, and bounds."""

    routes: dict[str, Literal["cypher", "gremlin", "sql"]] = {}
    max_depth: Positive = 8
    max_branches: Positive = 32


class ExportTable(Table):
    """`[export]`: `query-guard export` (proxy/export/): what is left out of the files."""

    exclude_labels: list[Name] = []  # node labels and relationship types
    exclude_properties: list[Name] = []  # `name` (everywhere) or `Label.name`
    page_size: Positive = 5000


_BOUND_TYPES = (str, int, float, _dt.date)  # datetime is a date


class SimilarityTable(Table):
    """`[gremlin.similarity]` (DESIGN §5), turned into settings by proxy/gremlin/similarity.py."""

    edges: dict[str, str] = Field(min_length=1)  # similarity label -> content edge (Φ)
    score_property: str = ""
    threshold: float | None = None
    window_property: str = ""
    window: list[Any] | None = None  # [lo, hi]: strings, numbers or dates
    case_label: str = "case"

    @field_validator("window")
    @classmethod
    def _window(cls, value: list[Any] | None) -> list[Any] | None:
        if value is None:
            return None
        if len(value) != 2 or not all(
            isinstance(b, _BOUND_TYPES) and not isinstance(b, bool) for b in value
        ):
            raise ValueError(
                f"must be a list [lo, hi] of two strings, numbers or dates, got {value!r}"
            )
        lo, hi = value
        try:
            if lo > hi:
                raise ValueError(f"lower bound {lo!r} is after upper bound {hi!r}")
        except TypeError:
            raise ValueError(f"bounds {lo!r} and {hi!r} are not comparable") from None
        return value


class GremlinSchemaTable(Table):
    """`[gremlin.schema]`: directed edges [from-label, edge-label, to-label]."""

    edges: list[Annotated[list[Name], Field(min_length=3, max_length=3)]] = []


class GremlinTable(Table):
    similarity: SimilarityTable | None = None
    edge_schema: GremlinSchemaTable | None = Field(None, alias="schema")


class ConfigFile(Table):
    """The whole file. `[rules.<rule>]` tables are checked against each rule's own `OPTIONS`
    when the guard is built (proxy/guard/options.py)."""

    noun: ClassVar[str] = "section"
    server: ServerTable = ServerTable()
    backend: BackendTable = BackendTable()
    guard: GuardTable = GuardTable()
    audit: AuditTable = AuditTable()
    compat: CompatTable = CompatTable()
    repair: RepairTable = RepairTable()
    limits: LimitsTable = LimitsTable()
    experience: ExperienceTable = ExperienceTable()
    context: ContextTable = ContextTable()
    plan: PlanTable = PlanTable()
    export: ExportTable = ExportTable()
    gremlin: GremlinTable = GremlinTable()
    rules: dict[str, dict[str, Any]] = {}


def keys_of(model: type[BaseModel]) -> list[str]:
    """The TOML names of a model's keys (aliases where the Python name differs)."""
    return [f.alias or name for name, f in model.model_fields.items()]


def table_model(annotation: Any) -> type[Table] | None:
    """The `Table` model an annotation holds (`X`, `X | None`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, Table):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        found = [table_model(a) for a in typing.get_args(annotation)]
        return next((m for m in found if m is not None), None)
    return None


def model_at(model: type[BaseModel], path: KeyPath) -> type[BaseModel] | None:
    """The model of the table at `path` below `model` (None: not a modelled table)."""
    current: type[BaseModel] | None = model
    for part in path:
        if current is None:
            return None
        fields = {f.alias or name: f for name, f in current.model_fields.items()}
        field = fields.get(part) if isinstance(part, str) else None
        current = None if field is None else table_model(field.annotation)
    return current
