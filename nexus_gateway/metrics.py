"""Prometheus metrics for a gateway run as a service (``GET /metrics`` beside ``/healthz``).

A sidecar or a shared gateway in front of many servers is watched by whatever watches the rest of the
fleet, and that is Prometheus more often than not: the calls each upstream took and how they ended,
how long they took, how often routing abstained or escalated, which upstreams are up. The health check
says whether the gateway serves now; these say how it has been serving.

``prometheus_client`` writes the exposition format (its escaping and histogram rules are easy to get
subtly wrong by hand); each gateway has its own ``CollectorRegistry``, not the library's process-wide
default, so two gateways in one process (the tests) never share a counter. Upstream states are read
from the pool when scraped, not kept twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .upstream import UpstreamState, UpstreamStatus

CONTENT_TYPE = CONTENT_TYPE_LATEST  # what generate_latest writes
# an upstream call: a local tool answers in a millisecond, a build runs for minutes
CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
# a routing decision: ~15 ms embedded and scanned, ~60 ms with the cross-encoder
ROUTE_BUCKETS = (0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1)


class UpstreamCollector(Collector):
    """The pool's upstreams as gauges, read at each scrape."""

    def __init__(self, statuses: Callable[[], Sequence[UpstreamStatus]], tool_count: Callable[[], int]) -> None:
        self.statuses = statuses
        self.tool_count = tool_count

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("nexus_upstream_up", "1 when the upstream is connected", labels=["server"])
        tools = GaugeMetricFamily("nexus_upstream_tools", "Tools the upstream lists", labels=["server"])
        attempts = GaugeMetricFamily(
            "nexus_upstream_connection_attempts", "Connections tried since the gateway started", labels=["server"]
        )
        for status in self.statuses():
            up.add_metric([status.name], float(status.state is UpstreamState.CONNECTED))
            tools.add_metric([status.name], status.tool_count)
            attempts.add_metric([status.name], status.attempts)
        yield from (up, tools, attempts)
        yield GaugeMetricFamily("nexus_registry_tools", "Tools in the registry", self.tool_count())


class GatewayMetrics:
    """Counters and histograms the gateway feeds as it works, and the text a scrape gets."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.calls = Counter(
            "nexus_calls",
            "Calls sent upstream, by how each ended: ok, error (the tool said so), failed, cancelled",
            ["server", "via", "outcome"],
            registry=self.registry,
        )
        self.call_seconds = Histogram(
            "nexus_call_seconds", "Upstream call time", ["server"], buckets=CALL_BUCKETS, registry=self.registry
        )
        self.routes = Counter(
            "nexus_routes",
            "Routing decisions: by surface (search, call), whether one tool was chosen, and whether the "
            "cross-encoder gate escalated",
            ["surface", "decision", "escalated"],
            registry=self.registry,
        )
        self.route_seconds = Histogram(
            "nexus_route_seconds", "Routing time (embed to gate)", buckets=ROUTE_BUCKETS, registry=self.registry
        )
        self.intents = Counter(
            "nexus_intents",
            "call(intent) requests by how each ended: forwarded, or the status of the report the host got "
            "(needs_arguments, no_confident_match, needs_confirmation, declined, planned, …)",
            ["outcome"],
            registry=self.registry,
        )
        self.intent_seconds = Histogram(
            "nexus_intent_seconds",
            "call(intent) time: route, generate the arguments, confirm, forward",
            buckets=CALL_BUCKETS,
            registry=self.registry,
        )

    def watch_upstreams(self, statuses: Callable[[], Sequence[UpstreamStatus]], tool_count: Callable[[], int]) -> None:
        self.registry.register(UpstreamCollector(statuses, tool_count))

    def call_ended(self, server: str, via: str, outcome: str, seconds: float) -> None:
        self.calls.labels(server, via, outcome).inc()
        self.call_seconds.labels(server).observe(seconds)

    def routed(self, surface: str, chosen: bool, escalated: bool, seconds: float) -> None:
        self.routes.labels(surface, "chosen" if chosen else "abstained", "yes" if escalated else "no").inc()
        self.route_seconds.observe(seconds)

    def intent_ended(self, outcome: str, seconds: float) -> None:
        self.intents.labels(outcome).inc()
        self.intent_seconds.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
