"""Prometheus metrics of one app, in its own registry (tests build several apps in one process).

With ``--workers N`` every worker counts its own requests: a scrape reaches one worker,
so sum over scrapes by ``instance`` or run one worker per port when exact totals matter.
"""
from __future__ import annotations

import time

from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram,
                               disable_created_metrics, generate_latest)

disable_created_metrics()  # no *_created series: they double the output and no dashboard reads them

# Milliseconds matter for search; answers with a local model take seconds.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter("asmr_requests_total", "HTTP requests by route, method and status",
                                ("route", "method", "status"), registry=r)
        self.latency = Histogram("asmr_request_seconds", "HTTP request latency by route", ("route",),
                                 buckets=BUCKETS, registry=r)
        self.cache = Counter("asmr_retrieval_cache_total", "retrievals answered from the question cache (hit) "
                                                           "or computed (miss)", ("result",), registry=r)
        self.refusals = Counter("asmr_refusals_total", "'not found' results: retrieval below the confidence "
                                                       "threshold", ("endpoint",), registry=r)
        self.verifier = Counter("asmr_verifier_outcomes_total", "verified sentences by outcome "
                                                                "(keep, weaken, drop, uncited)", ("outcome",),
                                registry=r)
        self.ingests = Counter("asmr_ingests_total", "ingests through the server by result", ("result",),
                               registry=r)
        self.auth_failures = Counter("asmr_auth_failures_total", "requests refused by authentication (401) or "
                                                                 "scope (403)", ("status",), registry=r)
        self.rate_limited = Counter("asmr_rate_limited_total", "requests refused by the rate limit", registry=r)
        self.generation = Gauge("asmr_memory_generation", "generation of the snapshot being served", registry=r)

    def observe_retrieval(self, result, endpoint: str) -> None:
        self.cache.labels("hit" if result.cached else "miss").inc()
        if not result.found:
            self.refusals.labels(endpoint).inc()

    def observe_verification(self, verification) -> None:
        if verification is not None:
            for outcome, n in verification.counts.items():
                if n:
                    self.verifier.labels(outcome).inc(n)

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class RequestMetrics:
    """ASGI middleware: count and time every HTTP request by its route template (not its raw path,
    which would make one series per unit id)."""

    def __init__(self, app, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        status = 500

        async def send_status(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, send_status)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.requests.labels(route, scope["method"], str(status)).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - t0)
