"""Bolt parameters reach the database exactly as the client sent them (issue 10 item 8): the
real neo4j driver sends hypothesis-generated values — every temporal type with nanoseconds, in
offset and zone-id forms and at the extreme years, 2D / 3D points, durations, byte arrays,
nested lists and maps — to a test-started ArcadeDB straight and through the proxy; what
ArcadeDB answers (its echo of the value, `toString` of it, or its error) must be the same — an
error's code included, except the codes the proxy translates to Neo4j's (`bolt_codes.TRANSLATED`:
ArcadeDB's `TypeError:` SemanticError is Neo4j's Statement.TypeError), which must be the table's."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from typing import Any

import neo4j
import pytest
import pytz
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from neo4j import spatial
from neo4j import time as ntime

from query_guard.backends.bolt_codes import neo4j_code
from query_guard.config.load import parse_config
from query_guard.runner import ProxyThread
from tests.budget import examples

PASSWORD_ENV = "QG_TEST_VALUES_PASSWORD"
ZONES = ["UTC", "Europe/Stockholm", "America/Los_Angeles", "Asia/Kathmandu", "Pacific/Kiritimati"]
_JAVA_ARRAY = re.compile(r"\[B@[0-9a-f]+")
STOCKHOLM = pytz.timezone("Europe/Stockholm")
HOURS_12 = dt.timedelta(hours=12)
QUERIES = ("RETURN $x AS x", "RETURN toString($x) AS x")

years = st.sampled_from([1, 2, 1582, 1969, 1970, 2024, 9998, 9999]) | st.integers(1, 9999)
offsets = st.integers(-18 * 60, 18 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
# pytz zones: the driver hands its own DateTime to `tzinfo.utcoffset`, which crashes the
# interpreter with a ZoneInfo (the C implementation expects a datetime.datetime)
zones = st.sampled_from(ZONES).map(pytz.timezone)
nanos = st.sampled_from([0, 1, 4123, 999_999_999]) | st.integers(0, 999_999_999)


@st.composite
def dates(draw: st.DrawFn, year_range: st.SearchStrategy[int] = years) -> ntime.Date:
    year = draw(year_range)
    month = draw(st.integers(1, 12))
    return ntime.Date(year, month, draw(st.integers(1, 28)))


@st.composite
def times(draw: st.DrawFn, tz: Any = None) -> ntime.Time:
    h, m, s = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    return ntime.Time(h, m, s, draw(nanos), tzinfo=draw(tz) if tz is not None else None)


@st.composite
def date_times(draw: st.DrawFn, tz: Any = None) -> ntime.DateTime:
    d, t = draw(dates()), draw(times())
    value = ntime.DateTime(
        d.year, d.month, d.day, t.hour, t.minute, t.second, t.nanosecond
    )
    if tz is None:
        return value
    zone = draw(tz)
    try:
        return zone.localize(value) if hasattr(zone, "localize") else value.replace(tzinfo=zone)
    except ValueError:  # the driver's own arithmetic fails at some zone/instant edges
        assume(False)
        raise


durations = st.builds(
    ntime.Duration,
    months=st.integers(-(10**6), 10**6),
    days=st.integers(-(10**6), 10**6),
    seconds=st.integers(-(10**9), 10**9),
    nanoseconds=nanos,
)
coords = st.floats(-1e6, 1e6, allow_nan=False)
points = st.one_of(
    st.builds(lambda x, y: spatial.CartesianPoint((x, y)), coords, coords),
    st.builds(lambda x, y, z: spatial.CartesianPoint((x, y, z)), coords, coords, coords),
    st.builds(lambda x, y: spatial.WGS84Point((x, y)), st.floats(-180, 180), st.floats(-90, 90)),
)
temporal = st.one_of(
    dates(), times(), times(offsets), date_times(), date_times(offsets), date_times(zones)
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=10),
    st.binary(max_size=16), st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
values = st.recursive(
    temporal | durations | points | scalars,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), inner, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def proxy(arcadedb_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    os.environ[PASSWORD_ENV] = arcadedb_server.root_password
    tmp = tmp_path_factory.mktemp("bolt-values")
    backend = {
        "cypher": arcadedb_server.url,
        "database": arcadedb_server.database,
        "credentials": "configured",
        "user": "root",
        "password_env": PASSWORD_ENV,
    }
    server = {"bolt": "127.0.0.1:0", "data_dir": str(tmp)}
    config = parse_config({"server": server, "backend": backend})
    try:
        with ProxyThread(config) as running:
            yield f"bolt://{running.address}"
    finally:
        os.environ.pop(PASSWORD_ENV, None)


@pytest.fixture(scope="module")
def sessions(proxy: str, arcadedb_server: Any) -> Iterator[tuple[neo4j.Session, neo4j.Session]]:
    with (
        neo4j.GraphDatabase.driver(arcadedb_server.url, auth=arcadedb_server.auth) as direct,
        neo4j.GraphDatabase.driver(proxy, auth=("anyone", "anything")) as proxied,
        direct.session(database=arcadedb_server.database) as straight,
        proxied.session() as through,
    ):
        yield straight, through


def answer(session: neo4j.Session, query: str, value: Any) -> tuple[str, Any]:
    """What the database said: the record, or the error (the session is usable again)."""
    try:
        return "rows", [[_canon(v) for v in r.values()] for r in session.run(query, x=value)]
    except neo4j.exceptions.Neo4jError as exc:
        return "error", (exc.code, exc.message)
    except Exception as exc:  # refused by the driver before sending: must happen alike
        return "client", (type(exc).__name__, str(exc))


def test_a_translated_error_differs_from_the_direct_one_by_its_code_only(
    sessions: tuple[neo4j.Session, neo4j.Session],
) -> None:
    """The table's entry is exercised, not only when hypothesis draws a list or a map."""
    straight, through = sessions
    direct = answer(straight, QUERIES[1], [1, 2])
    proxied = answer(through, QUERIES[1], [1, 2])
    assert direct[0] == proxied[0] == "error"
    assert direct[1][0] == "Neo.ClientError.Statement.SemanticError"
    assert proxied[1] == ("Neo.ClientError.Statement.TypeError", direct[1][1])


def as_proxied(direct: tuple[str, Any]) -> tuple[str, Any]:
    """A direct connection's answer as the proxy must give it: the same, but an error whose
    code the proxy's table translates carries the table's code (the message unchanged)."""
    if direct[0] != "error":
        return direct
    code, message = direct[1]
    return "error", (neo4j_code(code, message or ""), message)


def _canon(value: Any) -> Any:
    """ArcadeDB's `toString` of a byte array is Java's identity string (`[B@1ec0942a`),
    different on every call: compared without the hash."""
    return _JAVA_ARRAY.sub("[B@", value) if isinstance(value, str) else value


@given(value=values)
@settings(
    max_examples=examples(120), suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_parameter_arrives_as_it_does_on_a_direct_connection(
    sessions: tuple[neo4j.Session, neo4j.Session], value: Any
) -> None:
    straight, through = sessions
    for query in QUERIES:
        assert answer(through, query, value) == as_proxied(answer(straight, query, value)), query


@pytest.mark.parametrize(
    "value",
    [
        STOCKHOLM.localize(ntime.DateTime(2024, 2, 29, 23, 59, 59, 4123)),
        ntime.DateTime(1, 1, 1, 0, 0, 0, 1, tzinfo=dt.timezone(dt.timedelta(hours=14))),
        ntime.DateTime(9999, 12, 31, 23, 59, 59, 999_999_999, tzinfo=dt.timezone(-HOURS_12)),
        ntime.DateTime(2024, 1, 2, 3, 4, 5, 4123),
        ntime.Time(3, 4, 5, 4123, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
        ntime.Time(3, 4, 5, 4123),
    ],
)
def test_nanoseconds_and_extreme_years_survive(
    sessions: tuple[neo4j.Session, neo4j.Session], value: Any
) -> None:
    straight, through = sessions
    direct = answer(straight, QUERIES[1], value)
    assert answer(through, QUERIES[1], value) == as_proxied(direct)
    if direct[0] == "rows" and value.nanosecond % 1000:  # ArcadeDB kept the nanoseconds
        assert str(value.nanosecond)[-3:] in direct[1][0][0]
