"""State shared beyond one request: rate-limit buckets, task records, the broadcast."""

from ._memory import MemoryStore as MemoryStore
from ._memory import Store as Store
