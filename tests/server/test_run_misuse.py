"""``server.run()`` misused: errors of the McpError tree that say what to do."""

from __future__ import annotations

import pytest
import trio

from trio_mcp import McpError, Server


def test_an_unknown_transport_is_an_invalid_argument() -> None:
    server = Server("misuse", "1.0")

    with pytest.raises(McpError.InvalidArgument, match="use 'stdio', 'http'") as raised:
        server.run("bogus")

    assert isinstance(raised.value, ValueError)  # what it was before


def test_run_inside_a_running_trio_loop_says_to_await_a_serve_method() -> None:
    server = Server("misuse", "1.0")

    async def main() -> None:
        server.run("http", port=0)

    with pytest.raises(McpError.AlreadyRunning) as raised:
        trio.run(main)

    assert "await server.serve_http(...)" in str(raised.value)
    assert isinstance(raised.value, RuntimeError)  # what Trio raised before


def test_a_server_name_that_is_no_string_is_an_invalid_argument() -> None:
    with pytest.raises(McpError.InvalidArgument, match="takes a string") as raised:
        Server(5, "1.0")  # type: ignore[arg-type]

    assert isinstance(raised.value, TypeError)  # what it was before


def test_an_unknown_http_option_is_an_invalid_argument() -> None:
    with pytest.raises(McpError.InvalidArgument, match="HttpOptions") as raised:
        Server("misuse", "1.0").mount(max_bodies=3)  # type: ignore[call-arg]

    assert isinstance(raised.value, TypeError)  # what it was before
