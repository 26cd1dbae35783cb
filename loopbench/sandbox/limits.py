"""What a sandboxed run may spend: its wall clock, CPU, memory, processes, output and disk."""

from __future__ import annotations

import math
from dataclasses import dataclass

from loopbench.sandbox.isolation import MB

FILES = 16  # new files and folders a run may make; each may hold disk_mb / FILES


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    """Wall clock for the whole run, interpreter start included."""
    cpu_s: float | None = None
    """CPU time (RLIMIT_CPU); None means a second past timeout_s, so a busy loop times out."""
    memory_mb: int = 512
    """Memory of the whole box (its cgroup) where this machine allows it, and the address
    space of each of its processes (RLIMIT_AS)."""
    processes: int = 64
    """Processes and threads of the box (its cgroup), and of the run's uid (RLIMIT_NPROC)."""
    output_bytes: int = 64_000
    """What the candidate may print, stdout and stderr together."""
    disk_mb: int = 64
    """What the run may write: the size of each of its tmpfs (work directory, /tmp, /dev/shm)
    under bwrap, of its root (all three) under unshare; at every level at most FILES new
    files and folders, each of at most disk_mb / FILES (RLIMIT_FSIZE)."""

    def cpu_seconds(self) -> int:
        # guard: cpu-limit-lies-past-wall
        return max(1, math.ceil(self.timeout_s + 1 if self.cpu_s is None else self.cpu_s))

    def file_bytes(self) -> int:
        # guard: file-gets-share-disk
        return max(1, self.disk_mb * MB // FILES)

    def to_job(self) -> dict[str, int]:
        return {
            "cpu_s": self.cpu_seconds(),
            "memory_mb": self.memory_mb,
            "processes": self.processes,
            "output_bytes": self.output_bytes,
            "file_bytes": self.file_bytes(),
            "files": FILES,
        }
