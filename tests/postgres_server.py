"""A throwaway PostgreSQL server from the distribution's packages (/usr/lib/postgresql/*/bin)
for the tests that need a real one (tests/e2e/test_sql_backends.py, test_experience_stores.py);
`pytest.skip` (saying why) inside the fixture when it cannot start here."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Postgres(NamedTuple):
    url: str
    log: Path


@contextmanager
def postgres_server(*settings: str) -> Iterator[Postgres]:
    """A running server (trust authentication, no fsync; more `-c` settings, e.g.
    "log_statement=all"); yields the `postgres` database's URL and the server's log, and
    stops the server afterwards."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins:
        pytest.skip("PostgreSQL is not installed (.ci/run installs the distribution's package)")
    bindir = Path(bins[-1]).parent
    root = Path(tempfile.mkdtemp(prefix="qg-pg-"))
    data, port = root / "data", _free_port()
    prefix: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL")
        prefix = ["runuser", "-u", "postgres", "--"]
        os.chmod(root, 0o777)
        subprocess.run(["chown", "postgres", str(root)], check=True)
    init = [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
    subprocess.run([*init, "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
    options = " ".join(
        [f"-p {port} -k {root}", *(f"-c {s}" for s in ("listen_addresses=127.0.0.1",
                                                        "fsync=off", *settings))]
    )  # fmt: skip
    ctl = [*prefix, str(bindir / "pg_ctl"), "-D", str(data)]
    subprocess.run([*ctl, "-o", options, "-l", str(root / "server.log"), "-w", "start"],
                   check=True, capture_output=True)  # fmt: skip
    try:
        yield Postgres(f"postgresql://postgres@127.0.0.1:{port}/postgres", root / "server.log")
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
