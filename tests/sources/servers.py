"""Real Prometheus, Alertmanager and VictoriaMetrics processes on free loopback ports, temporary storage.

Each server is started from its Debian package's binary and awaited on its own readiness endpoint
with a bounded poll; its output goes to a log file that a failing wait quotes.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.waiting import until

PROMETHEUS = "/usr/bin/prometheus"
ALERTMANAGER = "/usr/bin/prometheus-alertmanager"
VICTORIA_METRICS = "/usr/bin/victoria-metrics"

RULES = """
groups:
- name: evigate-test
  interval: 500ms
  rules:
  - alert: TestHighErrorRate
    expr: test_error_ratio > 0.05
    labels: {severity: critical}
    annotations:
      summary: "{{ $labels.service }} error ratio is {{ $value }}"
      description: "{{ $labels.service }} answers {{ $value | humanizePercentage }} of requests with 5xx"
      runbook_url: "https://runbooks.invalid/high-error-rate"
      value: "{{ $value | humanizePercentage }}"
  - alert: TestSlowResponses
    expr: test_latency_seconds > 1
    for: 2s
    labels: {severity: warning}
    annotations:
      summary: "p99 latency above 1s"
  - alert: TestUpstreamDown
    expr: test_upstream_down > 0
    labels: {severity: critical}
    annotations:
      summary: "upstream of {{ $labels.service }} is down"
  - alert: TestDownstreamErrors
    expr: test_downstream_errors > 0
    labels: {severity: warning}
    annotations:
      summary: "downstream errors, current value is {{ $value }}"
"""

ALERTMANAGER_CONFIG = """
route:
  receiver: blackhole
  group_by: [alertname, service]
receivers:
- name: blackhole
inhibit_rules:
- source_matchers: [alertname="TestUpstreamDown"]
  target_matchers: [alertname="TestDownstreamErrors"]
  equal: [service]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for(check: Callable[[], bool], timeout: float, what: str, log: Path | None = None) -> None:
    """Poll `check` until it holds; fail naming `what` (and quoting the server log) after `timeout`."""

    def tail() -> str:
        return log.read_text(errors="replace")[-2000:] if log and log.exists() else ""

    until(check, within=timeout, what=what, detail=tail)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _start(name: str, args: list[str], port: int, workdir: Path, ready_path: str) -> Server:
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    server = Server(name, port, process, log)

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(
                f"{name} exited with {process.returncode}:\n{log.read_text(errors='replace')[-2000:]}"
            )
        return _answers(server.url + ready_path)

    try:
        wait_for(ready, 30, f"{name} ready", log)
    except AssertionError:
        server.stop()
        raise
    return server


def start_alertmanager(workdir: Path) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "alertmanager.yml").write_text(ALERTMANAGER_CONFIG)
    port = free_port()
    args = [
        ALERTMANAGER,
        f"--config.file={workdir / 'alertmanager.yml'}",
        f"--storage.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=",  # no gossip port: a single, isolated instance
    ]
    return _start("alertmanager", args, port, workdir, "/-/ready")


def scrape_config(exporter_port: int, interval: str = "500ms", *, rules: bool = True) -> str:
    evaluation = f"  evaluation_interval: {interval}\n" if rules else ""
    return f"""
  scrape_interval: {interval}
{evaluation}scrape_configs:
- job_name: app
  scrape_interval: {interval}
  static_configs:
  - targets: ["127.0.0.1:{exporter_port}"]
"""


def start_prometheus(workdir: Path, exporter_port: int, alertmanager_port: int | None) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "rules.yml").write_text(RULES)
    target = f'["127.0.0.1:{alertmanager_port}"]'
    alerting = (
        f"alerting:\n  alertmanagers:\n  - static_configs:\n    - targets: {target}\n"
        if alertmanager_port
        else ""
    )
    config = f"global:{scrape_config(exporter_port)}rule_files: [{workdir / 'rules.yml'}]\n{alerting}"
    (workdir / "prometheus.yml").write_text(config)
    port = free_port()
    args = [
        PROMETHEUS,
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    return _start("prometheus", args, port, workdir, "/-/ready")


def start_victoria_metrics(workdir: Path, exporter_port: int | None, retention: str = "1") -> Server:
    """Scraping the exporter on `exporter_port`; with None, scraping nothing (series are imported).
    `retention` in VictoriaMetrics' terms: a number of months by default, "100y" for data of any age."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    args = [
        VICTORIA_METRICS,
        f"-httpListenAddr=127.0.0.1:{port}",
        f"-storageDataPath={workdir / 'data'}",
        f"-retentionPeriod={retention}",
        # Serve samples as soon as they are scraped, and never from a cache of older answers.
        "-search.latencyOffset=0s",
        "-search.disableCache",
    ]
    if exporter_port is not None:
        (workdir / "scrape.yml").write_text(f"global:{scrape_config(exporter_port, rules=False)}")
        args.append(f"-promscrape.config={workdir / 'scrape.yml'}")
    return _start("victoria-metrics", args, port, workdir, "/health")


def wait_scraped(server: Server, timeout: float = 40.0) -> None:
    """Until the store holds a sample of the exporter's `up` (Prometheus' scrape manager applies
    new targets on a 5 s tick, so the first scrape may come several seconds after start)."""

    def scraped() -> bool:
        try:
            if server.name == "victoria-metrics":
                httpx.get(server.url + "/internal/force_flush", timeout=2)  # see conftest.Store.settle
            body = httpx.get(
                server.url + "/api/v1/query", params={"query": 'up{job="app"} == 1'}, timeout=2
            ).json()
        except (httpx.HTTPError, ValueError):
            return False
        return bool(body.get("data", {}).get("result"))

    wait_for(scraped, timeout, f"{server.name} to scrape the exporter", server.log)
