"""Fixtures for the scale-out tests: a real redis-server and trio-mcp replicas.

They live in scale_procs.py, where mypy checks them: a second module named
``conftest`` (tests/authority has one) would clash under mypy.
"""

from scale_procs import redis_server, replicas

__all__ = ["redis_server", "replicas"]
