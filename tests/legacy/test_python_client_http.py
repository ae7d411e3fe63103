"""The official Python SDK's client (``mcp`` 2.3.0) in its handshake mode over HTTP.

``Client(url, mode="legacy")`` sends ``initialize`` to a dual-era server on
Hypercorn and speaks revision 2025-11-25 with a session: lists, calls with
progress, logging after ``logging/setLevel``, elicitation, sampling and roots
through the client's callbacks (server-to-client requests on each call's stream,
answered by the client's POSTs), a cancelled call, and resource updates on the
session's ``GET`` stream after ``resources/subscribe``. A recording layer keeps
every response; each message the server sent is validated against 2025-11-25.
"""

from __future__ import annotations

import pytest
from legacy_server import make_server
from support import serving_app
from support.asgi import Recorder
from support.legacy_http import check_recorded
from support.sdk import check_handshake_tour, handshake_tour, sdk_streams_left_open

#: The client warns on each handshake-era method (removed or deprecated by
#: 2026-07-28): its opinion of the era this test exercises on purpose.
pytestmark = [
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    sdk_streams_left_open,
]

WAIT = 30.0


async def test_the_python_client_in_handshake_mode_over_http() -> None:
    recorder = Recorder(make_server().mount())
    async with serving_app(recorder) as url:
        seen = await handshake_tour(url + "/mcp", WAIT)

    check_handshake_tour(seen)
    methods = [(e.method, e.status) for e in recorder.exchanges]
    assert ("GET", 200) in methods  # the session's stream
    assert ("DELETE", 200) == methods[-1]  # the client ends its session
    assert check_recorded(recorder) > 20
