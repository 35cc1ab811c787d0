"""A throwaway PostgreSQL server from the distribution's packages (/usr/lib/postgresql/*/bin)
for the tests that need a real one; `pytest.skip` (saying why) inside the fixture when it
cannot start here."""

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

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres_server() -> Iterator[str]:
    """A running server (trust authentication, no fsync); yields the `postgres` database's
    URL and stops the server afterwards."""
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
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    ctl = [*prefix, str(bindir / "pg_ctl"), "-D", str(data)]
    subprocess.run([*ctl, "-o", options, "-l", str(root / "server.log"), "-w", "start"],
                   check=True, capture_output=True)  # fmt: skip
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
