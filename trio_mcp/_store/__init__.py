"""State shared beyond one request: rate-limit buckets, task records, the broadcast."""

from ._memory import MemoryStore as MemoryStore
from ._memory import Store as Store
from ._redis import RedisStore as RedisStore
from ._redis import StoreUnavailable as StoreUnavailable
