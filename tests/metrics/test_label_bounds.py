"""Metric labels come only from the catalog and the protocol (issue 34).

A method the server does not serve, and a tool or prompt name the catalog does not
have, are recorded under the one value ``_OTHER``: whatever a client sends, the
label sets of the Prometheus registry stay those of the server's own vocabulary.
"""

from __future__ import annotations

import json

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from support import META, mcp_http, serving
from support.tools import echo_as

from trio_mcp import Server, prompt
from trio_mcp._metrics import enable_prometheus, prometheus_text
from trio_mcp.testing import McpTestClient

labelled_echo = echo_as("labelled_echo")


@prompt
def labelled_prompt() -> str:
    """A prompt to get."""
    return "hello"


SERVER = Server("labels", "1", tools=[labelled_echo], prompts=[labelled_prompt])


def label_values() -> dict[str, set[str]]:
    """Every value each label of the registry holds now."""
    text, _ = prometheus_text()
    values: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            for label, value in sample.labels.items():
                values.setdefault(label, set()).add(value)
    return values


SERVED = {
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
}
OWN = {
    "mcp_method_name": SERVED | {"_OTHER"},
    "gen_ai_tool_name": {"", "labelled_echo", "_OTHER"},
    "gen_ai_prompt_name": {"", "labelled_prompt", "_OTHER"},
}

methods = st.text(max_size=40) | st.sampled_from(
    ["initialize", "ping", "tools/call", "prompts/get", "resources/read", "x" * 300]
)
names = st.none() | st.integers() | st.text(max_size=40)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batch=st.lists(st.tuples(methods, names), min_size=1, max_size=20))
async def test_no_request_adds_a_label_value(
    batch: list[tuple[str, object]],
) -> None:
    enable_prometheus()
    before = label_values()
    async with McpTestClient(SERVER) as client:
        for n, (method, name) in enumerate(batch):
            params: dict[str, object] = {"_meta": META}
            if name is not None:
                params["name"] = name
            message = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
            await client.send_raw(json.dumps(message), settle=0)
    found = label_values()
    for label, allowed in OWN.items():
        added = found.get(label, set()) - before.get(label, set())
        assert added <= allowed, label


async def test_invented_methods_over_http_leave_the_metrics_page_as_it_was() -> None:
    """The audit's reproducer, scaled down: invented methods over real HTTP, then
    one scrape; the page grows by the ``_OTHER`` series at most once."""
    async with (
        serving(SERVER, metrics_path="/metrics") as url,
        httpx.AsyncClient() as client,
    ):
        await mcp_http.post(client, url, "made/up/first")
        before = (await client.get(url + "/metrics")).text
        statuses = set()
        for n in range(200):
            method = f"invented/{n}"
            response = await mcp_http.post(client, url, method)
            statuses.add(response.status_code)
        after = (await client.get(url + "/metrics")).text

    assert {404} == statuses
    assert "invented/" not in after
    series = [line for line in before.splitlines() if not line.startswith("#")]
    grown = [line for line in after.splitlines() if not line.startswith("#")]
    assert len(series) == len(grown)
    assert 'mcp_method_name="_OTHER"' in after
