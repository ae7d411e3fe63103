"""Fixtures shared by test directories."""

from __future__ import annotations

import pytest

from trio_mcp._transports._stdio import THREADS_ENV


@pytest.fixture(params=["fd-streams", "thread-streams"])
def stdio_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Serve stdio with POSIX ``FdStream``s, then with the thread-backed streams
    Windows uses (forced by ``TRIO_MCP_STDIO_THREADS=1``, which server
    subprocesses inherit). Use it in every module that serves stdio."""
    if request.param == "thread-streams":
        monkeypatch.setenv(THREADS_ENV, "1")
    else:
        monkeypatch.delenv(THREADS_ENV, raising=False)
    return str(request.param)
