"""``import trio_mcp.client`` is light: h11 comes with the first URL target's
HTTP link, trio-websocket with the first WebSocket, and no web server at all."""

from __future__ import annotations

import json
import subprocess
import sys

WEB = ("h11", "trio_websocket", "wsproto", "hypercorn", "httpx")


def _loaded_after(code: str) -> list[str]:
    report = "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", code + report],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return sorted(m for m in json.loads(done.stdout) if m.split(".")[0] in WEB)


def test_importing_the_client_loads_no_web_stack() -> None:
    assert [] == _loaded_after("import trio_mcp.client")


def test_a_stdio_client_loads_no_web_stack() -> None:
    code = (
        "import sys, trio\n"
        "from trio_mcp.client import Client\n"
        "from trio_mcp import McpError\n"
        "async def main():\n"
        "    try:\n"
        "        async with Client(['/nonexistent/server']):\n"
        "            pass\n"
        "    except McpError.Transport:\n"
        "        pass\n"
        "trio.run(main)\n"
    )

    assert [] == _loaded_after(code)
