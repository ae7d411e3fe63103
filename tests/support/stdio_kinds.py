"""The ``stdio_kind`` fixture: every stdio test runs with both kinds of streams.

Import it into a test module that serves stdio (``from support.stdio_kinds import
stdio_kind``) and mark the module ``pytest.mark.usefixtures("stdio_kind")``.
"""

from __future__ import annotations

import pytest

from trio_mcp._transports._stdio import THREADS_ENV

__all__ = ["stdio_kind"]


@pytest.fixture(params=["fd-streams", "thread-streams"])
def stdio_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Serve stdio with POSIX ``FdStream``s, then with the thread-backed streams
    Windows uses (forced by ``TRIO_MCP_STDIO_THREADS=1``, which server
    subprocesses inherit)."""
    if request.param == "thread-streams":
        monkeypatch.setenv(THREADS_ENV, "1")
    else:
        monkeypatch.delenv(THREADS_ENV, raising=False)
    return str(request.param)
