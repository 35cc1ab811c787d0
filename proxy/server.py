"""`query-guard serve`: one proxy instance — backend, schema, guard, audit log and frontends.
Everything is built per `ProxyServer` (plugin manager, config, caches); nothing is global, so
tests run several servers in one process."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from query_guard.backend import BackendError
from query_guard.backends.factory import make_backend, make_sql_backend
from query_guard.build import build_guard
from query_guard.config.auth import logon_check, printable_url
from query_guard.config.listen import check_exposure, split_address
from query_guard.config.load import Config
from query_guard.config.tls import listener_tls
from query_guard.console.feed import QueryFeed, console_feed
from query_guard.experience.library import open_experience
from query_guard.guard.pipeline import Guard
from query_guard.guard.plan import PlanRules
from query_guard.model import Finding, Verdict
from query_guard.repair.model import RepairSettings
from query_guard.repair.repairer import build_repairer
from query_guard.run.audit import AuditLog
from query_guard.run.cypher import CypherExecution
from query_guard.run.guard_pool import GuardPool
from query_guard.run.guards import LanguageGuard
from query_guard.run.limits import Limits
from query_guard.run.metrics import Metrics, fan_out
from query_guard.run.peers import Peers
from query_guard.run.runner import Route, Runner, Unserved
from query_guard.run.service import sql_route
from query_guard.run.sql_service import SqlService
from query_guard.schema.catalog import SchemaCatalog
from query_guard.schema.source import SchemaSource

log = logging.getLogger(__name__)


def cypher_guard(
    guard: Guard, note: Callable[[], Finding | None] | None = None
) -> Callable[[str, dict[str, Any]], Verdict]:
    """The Bolt frontend's guard callable: every RUN is Cypher; `note` adds a finding to each
    verdict the guard lets through (`SCH.NO_SCHEMA` while there is no schema); its `cached`
    answers a repeated query on the event loop (`query_guard.run.guards.LanguageGuard`)."""
    return LanguageGuard(guard, "cypher", note)


class ProxyServer:
    """Start with `await start()`; `bolt_port` is known afterwards; `await close()` stops all."""

    def __init__(
        self, config: Config, *, extra_plugins: tuple[object, ...] = (), listen: bool = True,
        peers_dir: str | None = None,  # where the workers meet (`run/peers.py`)
    ) -> None:
        self.config, self.peers_dir = config, peers_dir
        self.listen = listen  # False: build backends and guards, open no listener (MCP stdio)
        self.extra_plugins = extra_plugins
        self.embedded: Any = None  # EmbeddedFalkorDB when no backend is configured
        self.backend: Any = None
        self.guard: Guard | None = None
        self.schema: SchemaCatalog | None = None
        self.bolt: Any = None
        self.audit: AuditLog | None = None
        self.source: SchemaSource | None = None  # where the schema comes from, and when
        self.gremlin: Any = None  # GremlinFrontend when [server] gremlin is set
        self.gremlin_service: Any = None  # GremlinService when a Gremlin graph is configured
        self.http: Any = None  # HttpFrontend when [server] http is set
        self.sql: SqlService | None = None  # the SQL backend (language "sql"), lazily started
        self.metrics = Metrics()
        self.runner: Runner = None  # type: ignore[assignment]  # the request path, at start
        self.experience: Any = None  # the experience library (`[experience] enabled`)
        self.feed: QueryFeed | None = None  # recent queries for the console (`/ui`)
        self.peers: Peers | None = None  # the other workers of one `serve` (`run/peers.py`)
        self.on_query: Callable[..., None] = self.metrics

    @property
    def bolt_port(self) -> int:
        return int(self.bolt.port)

    @property
    def bolt_address(self) -> str:
        """Where clients connect (`host:port`, the real port when the config said 0)."""
        return f"{self.bolt.host}:{self.bolt.port}"

    @property
    def schema_source(self) -> str:
        """How the schema was (or will be) obtained (`serve` prints it)."""
        return self.source.description if self.source is not None else ""

    @property
    def backend_description(self) -> str:
        if self.embedded is not None:
            return f"embedded FalkorDB {self.embedded.address} (data {self.embedded.data_dir})"
        return printable_url(str(self.config.backend["cypher"]))

    async def start(self) -> None:
        if self.listen:
            check_exposure(self.config)
        try:
            self.audit = AuditLog(
                str(self.config.audit["path"]),
                include_parameters=bool(self.config.audit["include_parameters"]),
            )
            if self.peers_dir:  # first: a write through another worker is news from now on
                self.peers = Peers(self.peers_dir)
                await self.peers.start()
            self.feed = console_feed(self.config.server)
            self.on_query = fan_out(self.audit, self.metrics, self.feed)
            self.backend = await self._start_backend()
            self.source = SchemaSource(self.config, self.backend, self._backend_auth_hook())
            self.schema = await self.source.load()
            self.guard = build_guard(
                self.config, self.schema, extra_plugins=self.extra_plugins, skip_broken=True
            )
            self.guard.warm_up()  # the first client query must not pay for building parsers
            self.experience = open_experience(self.config, self.guard, self.metrics)
            self.sql = SqlService(self.guard, make_sql_backend(
                str(self.config.backend["sql"]), str(self.config.server["data_dir"]),
                self.config.limits,
            ), RepairSettings.from_config(self.config.repair))  # started on first use  # fmt: skip
            self.source.start(self.guard, self._found_schema)
            if self.peers is not None:
                self.source.share(self.peers)  # a write here makes every worker's schema stale
            log.info("schema: %s", self.schema_source)
            await self._start_frontends()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Stop the SQL backend's queries (a running one would hold a front's shutdown until
        its timeout), stop listening, then the backend, then the embedded database (each step
        runs even when an earlier one fails)."""
        try:
            if self.peers is not None:
                await self.peers.close()
            if self.sql is not None:
                sql, self.sql = self.sql, None
                try:
                    await sql.close()
                except Exception:  # the listeners must close all the same
                    log.exception("closing the SQL backend failed")
            if self.source is not None:
                await self.source.close()
            if self.bolt is not None:
                bolt, self.bolt = self.bolt, None
                await bolt.close()
            if self.gremlin is not None:
                gremlin, self.gremlin = self.gremlin, None
                await gremlin.close()
            if self.http is not None:
                http, self.http = self.http, None
                await http.close()
        finally:
            if self.runner is not None:
                self.runner.close()
            if self.experience is not None:
                experience, self.experience = self.experience, None
                experience.close()  # after the listeners: no run is still reporting
            if self.gremlin_service is not None:
                gremlin_service, self.gremlin_service = self.gremlin_service, None
                await gremlin_service.close()
            try:
                if self.backend is not None:
                    backend, self.backend = self.backend, None
                    await backend.close()
            finally:
                if self.embedded is not None:
                    embedded, self.embedded = self.embedded, None
                    await embedded.astop()
                if self.audit is not None:
                    self.audit.close()
                    self.audit = None

    async def __aenter__(self) -> ProxyServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ parts

    async def _start_backend(self) -> Any:
        url = str(self.config.backend["cypher"])
        if not url:
            from query_guard.backends.embedded import EmbeddedFalkorDB

            data_dir = Path(str(self.config.server["data_dir"])).expanduser() / "falkordb"
            self.embedded = EmbeddedFalkorDB(data_dir)
            await self.embedded.astart()
            log.info("embedded FalkorDB on port %d", self.embedded.port)
            url = self.embedded.url
        backend = make_backend(url, self.config)
        await backend.start()
        return backend

    def _found_schema(self, schema: SchemaCatalog) -> None:
        self.schema = schema

    def _build_runner(self) -> Runner:
        """The one request path every front of this proxy calls (`query_guard.run`), with a route
        per language: Cypher on the graph backend, SQL on the SQL backend, Gremlin on the
        Gremlin graph (judged but not run when there is none)."""
        assert self.guard is not None
        limits = Limits.from_config(self.config.limits)
        note = self.source.note if self.source is not None else None
        weights = self.experience.weigher if self.experience is not None else None
        repairer = build_repairer(self.guard, self.config, weights)
        cypher = CypherExecution(self.backend, repairer, schema=self.source)
        gremlin = (
            self.gremlin_service.route()
            if self.gremlin_service is not None
            else Route(LanguageGuard(self.guard, "gremlin"),
                       Unserved("no Gremlin graph is configured ([backend] gremlin)"))
        )  # fmt: skip
        routes = {
            "cypher": Route(cypher_guard(self.guard, note), cypher),
            "sql": sql_route(self.guard, self.sql, limits),
            "gremlin": gremlin,
        }
        pool = GuardPool(limits.guard_workers)
        return Runner(routes, limits=limits, pool=pool, on_query=self.on_query,
                      on_result=self.experience)  # fmt: skip

    async def _start_frontends(self) -> None:
        await self._start_gremlin_service()
        self.runner = self._build_runner()
        if not self.listen:
            return
        await self._start_gremlin()
        await self._start_http()
        from query_guard.frontends.bolt.server import BoltFrontend

        bolt = str(self.config.server["bolt"])
        if not bolt:
            return
        host, port = split_address(bolt, "server.bolt")
        given = self.config.server["advertised_address"]  # one address or a list
        advertised = tuple(a for a in ([given] if isinstance(given, str) else given) if a)
        assert self.guard is not None
        self.bolt = BoltFrontend(
            host,
            port,
            cypher_guard(self.guard, self.source.note if self.source else None),
            self.backend,
            advertised,
            on_query=self.on_query,
            authenticate=self._authenticate_hook(),
            limits=self.runner.limits,
            ssl_context=listener_tls(self.config),
            databases=self.config.guard.allowed_databases,
            runner=self.runner,
        )
        await self.bolt.start(reuse_port=self.config.server["workers"] != 1)
        bolt_front = self.bolt
        self.metrics.watch_connections("bolt", lambda: bolt_front.connections)

    async def _start_gremlin_service(self) -> None:
        """The Gremlin graph (`query_guard.run.gremlin_service`) when one is configured or
        served."""
        if str(self.config.server["gremlin"]) or str(self.config.backend["gremlin"]):
            from query_guard.run.gremlin_service import GremlinService

            self.gremlin_service = await GremlinService.create(self.config, self.extra_plugins)

    async def _start_gremlin(self) -> None:
        """The Gremlin Server front on `[server] gremlin`."""
        address = str(self.config.server["gremlin"])
        if not address:
            return
        from query_guard.frontends.gremlin_ws import GremlinFrontend

        host, port = split_address(address, "server.gremlin")
        self.gremlin = GremlinFrontend(
            host,
            port,
            self.runner,
            ssl_context=listener_tls(self.config),
            authenticate=logon_check(self.config.server["users"], None),
        )
        await self.gremlin.start(reuse_port=self.config.server["workers"] != 1)
        gremlin_front = self.gremlin
        self.metrics.watch_connections("gremlin", lambda: gremlin_front.connections)

    async def _start_http(self) -> None:
        """Neo4j's Query API v2, the legacy tx endpoint and the guard API on `[server] http`."""
        address = str(self.config.server["http"])
        if not address:
            return
        from query_guard.frontends.http import HttpFrontend

        assert self.guard is not None
        host, port = split_address(address, "server.http")
        service = self.query_service()
        database = str(self.config.backend["database"]) or "neo4j"
        from query_guard.console.page import Console
        from query_guard.frontends.mcp import build_mcp

        passthrough = bool(getattr(self.backend, "passthrough", False))
        self.http = HttpFrontend(
            host, port, service, database=database, ready=self._readiness, metrics=self.metrics,
            mcp=build_mcp(service, gremlin=self.gremlin_service is not None),
            max_body=int(self.config.server["http_max_body_bytes"]),
            cors_origins=tuple(map(str, self.config.server["http_cors_origins"])),
            allowed_hosts=tuple(map(str, self.config.server["http_allowed_hosts"])),
            ssl_context=listener_tls(self.config),
            authenticate=self._authenticate_hook(), bearer=passthrough,
            # clients without credentials: the pass-through backend's own account, as on Bolt
            anonymous=passthrough and not self.config.server["users"]
            and getattr(self.backend, "auth", None) is not None,
            console=None if self.feed is None else Console(self.feed, self.experience),
            peers=self.peers,
        )  # fmt: skip
        await self.http.start(reuse_port=self.config.server["workers"] != 1)
        http_front = self.http
        self.metrics.watch_connections("http", lambda: http_front.connections)

    def query_service(self) -> Any:
        """A `QueryService` (HTTP and MCP fronts) over this proxy's runner."""
        from query_guard.run.service import QueryService

        assert self.guard is not None
        plan = self.config.plan
        rules = PlanRules(int(plan["max_depth"]), int(plan["max_branches"]), dict(plan["routes"]))
        return QueryService(self.guard, self.backend, sql=self.sql, runner=self.runner,
                            experience=self.experience, plan=rules,
                            context_tokens=int(self.config.context["max_tokens"]))  # fmt: skip

    async def _readiness(self) -> dict[str, Any]:
        """/ready: the backend answers `RETURN 1`, and whether a schema is loaded (with the
        reason when either is not)."""
        reasons = []
        try:
            stream = await self.backend.run("RETURN 1", {}, None)
            await stream.fetch(-1)
            backend = True
        except BackendError as exc:
            # a pass-through backend without an account of its own refuses the probe's
            # missing credentials: it answered, so it is reachable
            backend = exc.code.startswith("Neo.ClientError.Security.")
            if not backend:
                log.warning("readiness probe failed: %s", exc)
                reasons.append(f"backend not reachable: {exc}")
        except Exception as exc:
            log.warning("readiness probe failed: %s", exc)
            backend = False
            reasons.append(f"backend not reachable: {exc}")
        schema = self.guard is not None and self.guard.ctx.schema is not None
        if not schema:
            note = self.source.note() if self.source is not None else None
            reasons.append(note.message if note is not None else "schema not loaded")
        out: dict[str, Any] = {"backend": backend, "schema": schema}
        if reasons:
            out["reason"] = "; ".join(reasons)
        return out

    def _authenticate_hook(self) -> Callable[[dict[str, Any]], Any] | None:
        """`[server] users` first (when set), then the backend's hook, followed by schema
        discovery in the first session that gets in while the schema waits for a client's
        credentials (`SchemaSource`)."""
        from query_guard.config.auth import logon_check

        check = logon_check(self.config.server["users"], self._backend_auth_hook())
        return self.source.wrap_authenticate(check) if self.source is not None else check

    def _backend_auth_hook(self) -> Callable[[dict[str, Any]], Any] | None:
        """Pass-through to a Bolt upstream: the relay backend remembers each connection's
        credentials and checks them upstream at LOGON."""
        if not getattr(self.backend, "passthrough", False):
            return None
        return getattr(self.backend, "authenticate", None)
