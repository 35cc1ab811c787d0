"""A `query-guard serve` process for the benchmarks, from this checkout or from a git
worktree of an earlier revision (to compare builds in one run), and its RSS with many idle
Bolt connections."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT

from query_guard.wire import bolt_messages as m
from query_guard.wire.packstream import Structure, packb


class Proxy:
    """`python -m query_guard serve` with a given `[backend]`; reads its RSS from /proc.

    `server` replaces the `[server]` listeners (default: Bolt on a free port), `extra` is
    TOML appended to the configuration, and `listener` the scheme whose printed address
    becomes `.address` (`bolt` or `ws` for the Gremlin front)."""

    def __init__(
        self, tmp: Path, backend: dict[str, str], env: dict[str, str], repair: bool = True,
        root: Path = ROOT, limits: bool = True, server: dict[str, str] | None = None,
        extra: str = "", listener: str = "bolt", extra_server: dict[str, int] | None = None,
    ) -> None:  # fmt: skip
        listeners = server if server is not None else {"bolt": "127.0.0.1:0"}
        lines = ["[server]", *(f'{k} = "{v}"' for k, v in listeners.items())]
        lines += [f"{k} = {v}" for k, v in (extra_server or {}).items()]  # e.g. workers = 2
        lines += [f'data_dir = "{tmp}"', "[backend]"]
        lines += [f'{k} = "{v}"' for k, v in backend.items()]
        lines += ["[audit]", f'path = "{tmp / "audit.jsonl"}"']
        lines += ["[repair]", f"enabled = {str(repair).lower()}"]
        if limits:  # 1,000 idle connections from this one host: above the default caps
            lines += ["[limits]", "max_connections = 2000", "max_connections_per_client = 2000"]
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "bench.toml").write_text("\n".join(lines) + "\n" + extra)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "query_guard", "serve", "--config", str(tmp / "bench.toml")],
            stdout=subprocess.PIPE, stderr=(tmp / "serve.log").open("wb"), text=True,
            cwd=root, env={**os.environ, **env, "PYTHONPATH": str(root)},
        )  # fmt: skip
        assert self.proc.stdout is not None
        printed = ""
        found = None
        while found is None:  # `serve` prints one line per listener
            line = self.proc.stdout.readline()
            printed += line
            found = re.search(rf"{listener}://([^/\s]+)", line)
            if not line:
                self.stop()
                raise SystemExit(f"serve did not start: {printed!r}; see {tmp / 'serve.log'}")
        self.address = found.group(1)

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)


class Baseline:
    """A git worktree of an earlier revision, whose `serve` runs beside this build's."""

    def __init__(self, rev: str, where: Path) -> None:
        self.rev = subprocess.run(
            ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True,
            text=True,
        ).stdout.strip()  # fmt: skip
        self.root = where / f"baseline-{self.rev}"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(self.root), self.rev],
            cwd=ROOT, check=True, capture_output=True,
        )  # fmt: skip
        package = self.root / "proxy" / "config"  # a module before the layout change
        sources = sorted(package.glob("*.py")) if package.is_dir() else [package.with_suffix(".py")]
        config = "".join(p.read_text() for p in sources)
        self.has_limits = '"limits"' in config or "class LimitsSection" in config

    def close(self) -> None:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(self.root)], cwd=ROOT, check=False
        )


def _bolt_logon() -> bytes:
    """Handshake (Bolt 5.4) + HELLO + LOGON, as one idle client sends them."""
    out = bytearray(b"\x60\x60\xb0\x17" + bytes([0, 0, 4, 5]) + bytes(12))
    hello = {"user_agent": "bench/1.0", "bolt_agent": {"product": "bench/1.0"}}
    logon = {"scheme": "basic", "principal": "neo4j", "credentials": "x"}
    m.frame(out, packb(Structure(0x01, [hello])))
    m.frame(out, packb(Structure(0x6A, [logon])))
    return bytes(out)


def idle_connections(address: str, count: int) -> list[socket.socket]:
    """`count` authenticated, idle Bolt connections to the proxy."""
    host, port = address.rsplit(":", 1)
    logon = _bolt_logon()
    socks = []
    for _ in range(count):
        s = socket.create_connection((host, int(port)))
        s.sendall(logon)
        socks.append(s)
    for s in socks:  # the version reply, then SUCCESS for HELLO and for LOGON
        s.settimeout(10)
        got = b""
        while got.count(b"\xb1\x70") < 2:
            chunk = s.recv(4096)
            if not chunk:
                raise SystemExit("the proxy closed an idle connection during logon")
            got += chunk
    return socks


def idle_rss(proxy: Proxy, count: int) -> tuple[float, float]:
    """The proxy's RSS in MiB before and with `count` idle connections open."""
    before = proxy.rss_mib()
    socks = idle_connections(proxy.address, count)
    time.sleep(1.0)
    after = proxy.rss_mib()
    for s in socks:
        s.close()
    return before, after
