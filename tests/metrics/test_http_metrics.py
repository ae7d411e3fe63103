"""``metrics_path``: the request metrics in Prometheus text, scraped over real HTTP.

The registry lives as long as the process, so each test compares a scrape after its
calls with one before them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import trio
from prometheus_client.parser import text_string_to_metric_families
from support import mcp_http, serving
from support.tools import echo_as
from support.waiting import Held

from trio_mcp import (
    Capability,
    Limits,
    RateLimit,
    Receipt,
    Server,
    ToolError,
    prompt,
    tool,
)

SECRET_CAP = Capability("metrics.secret", description="Read the secret.")


measured_echo = echo_as("measured_echo")


@tool
def measured_fails() -> str:
    """Fail in a way the model may read."""
    raise ToolError("no")


@tool(caps=[SECRET_CAP])
def measured_guarded() -> str:
    """Needs a capability nobody is granted."""
    return "secret"


@prompt
def measured_prompt() -> str:
    """A prompt to get."""
    return "hello"


Key = tuple[str, str, str, str]


async def scrape(
    client: httpx.AsyncClient, url: str
) -> tuple[Counter[Key], Counter[str]]:
    """The histogram's counts by (method, tool, prompt, error) and the counters (by
    name and method)."""
    with trio.fail_after(10):
        response = await client.get(url + "/metrics")
    assert 200 == response.status_code
    assert response.headers["content-type"].startswith("text/plain; version=")
    counts: Counter[Key] = Counter()
    counters: Counter[str] = Counter()
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "mcp_server_operation_duration_seconds_count":
                key = (
                    labels["mcp_method_name"],
                    labels["gen_ai_tool_name"],
                    labels["gen_ai_prompt_name"],
                    labels["error_type"],
                )
                counts[key] += int(sample.value)
            elif sample.name.startswith("trio_mcp_server_") and sample.name.endswith(
                "_total"
            ):
                # By method too: each counter's one label is the call's method.
                counters[f"{sample.name} {labels['mcp_method_name']}"] += int(
                    sample.value
                )
    return counts, counters


async def post(
    client: httpx.AsyncClient, url: str, method: str, **params: Any
) -> httpx.Response:
    return await mcp_http.post(client, url, method, params, name=params.get("name"))


def delta(after: Counter[Any], before: Counter[Any]) -> dict[Any, int]:
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


async def test_the_histogram_counts_every_call_by_method_and_name() -> None:
    server = Server(
        "metrics",
        "1",
        tools=[measured_echo, measured_fails, measured_guarded],
        prompts=[measured_prompt],
    )
    async with (
        serving(server, metrics_path="/metrics") as url,
        httpx.AsyncClient() as client,
    ):
        before, counters_before = await scrape(client, url)
        for n in range(3):
            await post(
                client,
                url,
                "tools/call",
                name="measured_echo",
                arguments={"text": f"{n}"},
            )
        await post(client, url, "tools/call", name="measured_fails")
        await post(client, url, "tools/call", name="measured_guarded")
        await post(client, url, "tools/call", name="no_such_tool")
        await post(client, url, "prompts/get", name="measured_prompt")
        await post(client, url, "prompts/get", name="measured_prompt")
        await post(client, url, "tools/list")
        await post(client, url, "server/discover")
        after, counters_after = await scrape(client, url)

    assert {
        ("tools/call", "measured_echo", "", ""): 3,
        ("tools/call", "measured_fails", "", "tool_error"): 1,
        ("tools/call", "measured_guarded", "", "tool_error"): 1,
        ("tools/call", "_OTHER", "", "-32602"): 1,
        ("prompts/get", "", "measured_prompt", ""): 2,
        ("tools/list", "", "", ""): 1,
        ("server/discover", "", "", ""): 1,
    } == delta(after, before)
    assert {"trio_mcp_server_refused_total tools/call": 1} == delta(
        counters_after, counters_before
    )


async def test_rate_limited_calls_are_counted_and_metrics_are_off_by_default() -> None:
    server = Server("metrics", "1", tools=[measured_echo])
    limit = RateLimit(1, 60)
    async with (
        serving(server, metrics_path="/metrics", rate_limit=limit) as url,
        httpx.AsyncClient() as client,
    ):
        _, before = await scrape(client, url)
        statuses = [
            (
                await post(
                    client,
                    url,
                    "tools/call",
                    name="measured_echo",
                    arguments={"text": "x"},
                )
            ).status_code
            for _ in range(3)
        ]
        _, after = await scrape(client, url)
    async with (
        serving(Server("plain", "1", tools=[measured_echo])) as url,
        httpx.AsyncClient() as client,
    ):
        absent = await client.get(url + "/metrics")

    assert [200, 429, 429] == statuses
    # A limited call is refused by the runner's limit step: a refusal too.
    assert {
        "trio_mcp_server_rate_limited_total tools/call": 2,
        "trio_mcp_server_refused_total tools/call": 2,
    } == delta(after, before)
    assert 404 == absent.status_code


OTEL_SCRIPT = """
import json, trio
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from trio_mcp import Server, tool
from trio_mcp.testing import McpTestClient

reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))

@tool
def hello() -> str:
    '''Say hello.'''
    return "hello"

async def main():
    async with McpTestClient(Server("otel", "1", tools=[hello])) as client:
        for _ in range(2):
            await client.call_tool("hello")
        await client.list_tools()

trio.run(main)
points = []
for rm in reader.get_metrics_data().resource_metrics:
    for sm in rm.scope_metrics:
        for m in sm.metrics:
            for p in m.data.data_points:
                points.append([m.name, m.unit, dict(p.attributes), getattr(p, "count", None)])
print(json.dumps(points))
"""


async def test_a_meter_provider_set_by_the_application_gets_the_semconv_histogram() -> (
    None
):
    import json
    import sys

    done = await trio.run_process(
        [sys.executable, "-c", OTEL_SCRIPT], capture_stdout=True, check=True
    )
    points = json.loads(done.stdout)

    assert [
        [
            "mcp.server.operation.duration",
            "s",
            {"mcp.method.name": "tools/call", "gen_ai.tool.name": "hello"},
            2,
        ],
        ["mcp.server.operation.duration", "s", {"mcp.method.name": "tools/list"}, 1],
    ] == sorted(points, key=lambda p: str(p[2]))


async def test_a_busy_answer_leaves_a_receipt_is_measured_and_costs_no_token() -> None:
    """A 503 (no place to wait) is a call answered: a ``refused`` receipt naming
    busy, one histogram count with ``error.type`` -32000, the busy counter (not
    the refusal one), and no rate-limit token taken."""
    slow = Held("measured_slow")
    receipts: list[Receipt] = []
    server = Server("busy", "1", tools=[slow.tool], receipts=receipts.append)
    statuses: list[int] = []

    async def call() -> None:
        response = await post(client, url, "tools/call", name="measured_slow")
        statuses.append(response.status_code)

    async with (
        serving(
            server,
            metrics_path="/metrics",
            limits=Limits(max_concurrent=1, max_waiting=0),
            rate_limit=RateLimit(2, 60),
        ) as url,
        httpx.AsyncClient() as client,
    ):
        before, counters_before = await scrape(client, url)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            with trio.fail_after(10):
                await slow.started.wait()
            busy = await post(client, url, "tools/call", name="measured_slow")
            slow.release.set()
        await call()  # the second token: the busy answer took none
        await call()  # the third call is over the limit
        after, counters_after = await scrape(client, url)

    assert 503 == busy.status_code
    assert "1" == busy.headers["retry-after"]
    assert -32000 == busy.json()["error"]["code"]
    assert [200, 200, 429] == statuses
    assert ["refused", "ok", "ok", "refused"] == [r.outcome for r in receipts]
    assert ["trio_mcp.Busy", None, None, "trio_mcp.RateLimit"] == [
        r.error_type for r in receipts
    ]
    assert {
        ("tools/call", "measured_slow", "", ""): 2,
        ("tools/call", "measured_slow", "", "-32000"): 2,
    } == delta(after, before)
    assert {
        "trio_mcp_server_busy_total tools/call": 1,
        "trio_mcp_server_rate_limited_total tools/call": 1,
        "trio_mcp_server_refused_total tools/call": 1,
    } == delta(counters_after, counters_before)
