from collections.abc import Callable, Hashable
from typing import Any


class ExpiringCache:
    def __init__(self, ttl: float, clock: Callable[[], float]) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.ttl = ttl
        self.clock = clock
        self.entries: dict[Hashable, tuple[Any, float]] = {}

    def set(self, key: Hashable, value: Any) -> None:
        self.entries[key] = (value, self.clock() + self.ttl)

    def get(self, key: Hashable, default: Any = None) -> Any:
        entry = self.entries.get(key)
        if entry is None:
            return default
        if self.clock() >= entry[1]:
            del self.entries[key]
            return default
        return entry[0]

    def __len__(self) -> int:
        now = self.clock()
        return sum(1 for _, expires in self.entries.values() if now < expires)
