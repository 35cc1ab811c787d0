"""Many proxies behind one TCP load balancer (HAProxy from Debian, installed by `.ci/run`): two
`query-guard serve` processes on one FalkorDB graph, each advertising the balancer in its
routing table; a routing driver (`neo4j://balancer`) keeps reading while each proxy in turn is
stopped and started again, and no read fails once the driver has retried."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import neo4j
import pytest

from query_guard.backends.embedded import free_port
from tests.e2e.test_server import ServeProcess
from tests.haproxy import Balancer, haproxy_binary


class Readers:
    """Threads that read through the balancer until stopped: counts of reads and failures."""

    def __init__(self, driver: neo4j.Driver, threads: int = 4) -> None:
        self.driver, self.done = driver, threading.Event()
        self.reads, self.failures, self.wrong = 0, [], []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            try:
                records, _, _ = self.driver.execute_query(
                    "MATCH (m:Movie) RETURN count(m) AS n", routing_=neo4j.RoutingControl.READ
                )
            except Exception as exc:  # a read that failed even after the driver's retries
                with self.lock:
                    self.failures.append(f"{exc!r}: {exc}")
                continue
            with self.lock:
                self.reads += 1
                if records[0]["n"] != 38:
                    self.wrong.append(records[0]["n"])

    def stop(self) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(60)


def test_reads_survive_a_proxy_restart_behind_haproxy(tmp_path: Path, movies_url: str) -> None:
    binary = haproxy_binary()
    if binary is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy; .ci/run does)")
    ports = [free_port(), free_port()]
    balancer = Balancer(binary, tmp_path, free_port(), ports)
    lb = f"127.0.0.1:{balancer.port}"

    def serve(i: int) -> ServeProcess:
        home = tmp_path / f"p{i}"
        home.mkdir(exist_ok=True)
        server = {"bolt": f"127.0.0.1:{ports[i]}", "advertised_address": lb}
        return ServeProcess(home, backend={"cypher": movies_url}, server=server)

    proxies = [serve(0), serve(1)]
    try:
        with neo4j.GraphDatabase.driver(f"neo4j://{lb}", auth=("u", "p")) as driver:
            driver.verify_connectivity()
            readers = Readers(driver)
            try:
                for i in (0, 1):
                    time.sleep(1.0)
                    assert proxies[i].stop() == 0, proxies[i].stderr()
                    time.sleep(1.0)  # only the other proxy serves now
                    proxies[i] = serve(i)
                time.sleep(1.0)
            finally:
                readers.stop()
    finally:
        for proxy in proxies:
            proxy.stop()
        balancer.stop()
    assert readers.failures == [], readers.failures[:5]
    assert readers.wrong == []
    assert readers.reads > 50, readers.reads
