"""HAProxy (Debian's package) in TCP mode in front of several query-guard proxies (or one
database), health-checked every 200 ms: the balancer of tests/e2e/test_balanced_proxies.py,
benchmarks/scale_out.py and proxy_overhead.py's relay floor."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

CONFIG = """\
global
    maxconn 512
defaults
    mode tcp
    timeout connect 1s
    timeout client 60s
    timeout server 60s
    retries 3
    option redispatch
frontend bolt
    bind 127.0.0.1:{port}
    default_backend proxies
backend proxies
    balance roundrobin
{servers}
"""


def haproxy_binary() -> str | None:
    """The installed `haproxy`, or None."""
    found = shutil.which("haproxy") or "/usr/sbin/haproxy"
    return found if Path(found).exists() else None


def haproxy_config(port: int, backends: list[int]) -> str:
    servers = "\n".join(
        f"    server p{i} 127.0.0.1:{backend} check inter 200ms fall 1 rise 1"
        for i, backend in enumerate(backends)
    )
    return CONFIG.format(port=port, servers=servers)


class Balancer:
    """HAProxy in the foreground on 127.0.0.1:`port` in front of `backends` (loopback ports);
    its configuration is written to `tmp`/haproxy.cfg."""

    def __init__(self, binary: str, tmp: Path, port: int, backends: list[int]) -> None:
        self.port = port
        config = tmp / "haproxy.cfg"
        config.write_text(haproxy_config(port, backends), "utf-8")
        self.proc = subprocess.Popen(
            [binary, "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while True:  # HAProxy listens a moment after it starts
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)

    close = stop  # a closer like the drivers' (benchmarks/proxy_overhead.py)
