"""The box: memory and process limits the kernel enforces on a run's processes as a whole.

Per-process limits (RLIMIT_AS, RLIMIT_NPROC) multiply: 64 processes of 512 MB each are 32 GB.
So each run gets cgroups of its own where this machine allows it (as root, with the memory
and pids controllers): cgroup v2 under this process's own cgroup when that can have children
with both controllers, else the v1 ``memory`` and ``pids`` hierarchies. The worker joins
them through descriptors opened here before it runs any of the candidate's code (see
``loopbench/sandbox/confine.py``), so every process it ever starts is born inside: its memory (tmpfs
files too) and its number of processes and threads are counted together, and over the
memory limit the kernel kills inside the box only. A box whose processes the kernel had to
kill for memory ends the run as ``killed``.

Where no cgroup can be made (not root, no controllers), ``watch`` stands in: this process
sums the memory (proportional set size) and counts the processes of the run (its uid as
root, else the descendants of its first process) every WATCH_S and ends the run when either
is over its limit. Between two looks a run can briefly reach RLIMIT_AS times RLIMIT_NPROC.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "loopbench-"
WATCH_S = 0.1
KILL_S = 10.0  # how long a box's processes may take to leave it once killed
_numbers = itertools.count()


class Box:
    """A run's cgroups: one directory (v2) or one per hierarchy (v1, memory and pids)."""

    def __init__(self, dirs: list[Path], version: int) -> None:
        self.dirs, self.version = dirs, version
        self.killed_for_memory = False
        """Whether the kernel killed a process of the box for memory (known once it ended)."""

    @classmethod
    def make(cls, memory_bytes: int, processes: int) -> Box | None:
        """A new box with these limits, or None where this machine allows none."""
        found = hierarchies()
        if found is None:
            return None
        version, parents = found
        name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
        dirs = [parent / name for parent in parents]
        made: list[Path] = []
        try:
            for folder in dirs:
                folder.mkdir(mode=0o700)
                made.append(folder)
            box = cls(dirs, version)
            box._limit(memory_bytes, processes)
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            return None
        return box

    def _limit(self, memory_bytes: int, processes: int) -> None:
        if self.version == 2:
            (folder,) = self.dirs
            _write(folder / "memory.max", memory_bytes)
            _write(folder / "pids.max", processes)
            _write(folder / "memory.swap.max", 0, optional=True)
            _write(folder / "memory.oom.group", 1, optional=True)  # the whole box goes
        else:
            memory, pids = self.dirs
            # guard: box-memory-limit
            _write(memory / "memory.limit_in_bytes", memory_bytes)
            _write(memory / "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
            # guard: box-process-limit
            _write(pids / "pids.max", processes)

    def join_fds(self) -> list[int]:
        """Descriptors on each ``cgroup.procs``, for the worker to write itself into."""
        return [os.open(d / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for d in self.dirs]

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the box for memory."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (self.dirs[0] / name).read_text()
        except OSError:
            return False
        counts = dict(line.split()[:2] for line in text.splitlines() if len(line.split()) >= 2)
        return int(counts.get("oom_kill", "0")) > 0

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return found

    def end(self) -> None:
        """Kills every process in the box and removes it, once they are gone (blocking)."""
        deadline = time.monotonic() + KILL_S
        self.killed_for_memory = self.oom_killed()
        if self.version == 2:
            _write(self.dirs[0] / "cgroup.kill", 1, optional=True)
        while pids := self.pids():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    # guard: ending-box-kills-what
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        for folder in self.dirs:
            _rmdir(folder, deadline)


def _write(path: Path, value: int, optional: bool = False) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if not optional:
            raise


def _rmdir(folder: Path, deadline: float) -> None:
    """Removes a box's cgroup; the kernel refuses while a process is still leaving it."""
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return  # left for the next start of this machine's harness to remove
            time.sleep(0.005)


@functools.cache
def hierarchies() -> tuple[int, list[Path]] | None:
    """(version, the cgroups the boxes go under) where this machine allows boxes; else None.
    Found once, tested by making and removing one box, and tidied of boxes left by processes
    that have ended."""
    if os.geteuid() != 0:
        return None
    for found in (_v2(), _v1()):
        if found is not None and _works(found):
            _tidy(found[1])
            return found
    return None


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount point, root, type, super options) of each mount of this process."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(fields) >= 5 and len(rest) >= 3:
                found.append((fields[4], fields[3], rest[0], rest[2]))
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per controller ("" for v2's unified hierarchy)."""
    paths = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _under(mount: str, root: str, path: str) -> Path | None:
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None
    return Path(mount + (path[len(root) :] if root != "/" else path))


def _v2() -> tuple[int, list[Path]] | None:
    own = _own_cgroups().get("")
    mount = next(((m, r) for m, r, kind, _ in _mounts() if kind == "cgroup2"), None)
    if own is None or mount is None or (parent := _under(*mount, own)) is None:
        return None
    try:
        if not {"memory", "pids"} <= set((parent / "cgroup.controllers").read_text().split()):
            return None
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not {"memory", "pids"} <= enabled:  # refused where the cgroup holds processes
            (parent / "cgroup.subtree_control").write_text("+memory +pids")
    except OSError:
        return None
    return 2, [parent]


def _v1() -> tuple[int, list[Path]] | None:
    own = _own_cgroups()
    parents = []
    for controller in ("memory", "pids"):
        mount = next(
            ((m, r) for m, r, kind, options in _mounts()
             if kind == "cgroup" and controller in options.split(",")),
            None,
        )  # fmt: skip
        if mount is None or controller not in own:
            return None
        parent = _under(*mount, own[controller])
        if parent is None:
            return None
        parents.append(parent)
    return 1, parents


def _works(found: tuple[int, list[Path]]) -> bool:
    version, parents = found
    probe = Box([p / f"{PREFIX}probe-{os.getpid()}" for p in parents], version)
    made = []
    try:
        for folder in probe.dirs:
            folder.mkdir(mode=0o700)
            made.append(folder)
        probe._limit(64 << 20, 8)
        return True
    except OSError:
        return False
    finally:
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _tidy(parents: list[Path]) -> None:
    """Removes empty boxes whose process has ended (a harness killed as it ran)."""
    for parent in parents:
        with contextlib.suppress(OSError):
            for folder in parent.glob(f"{PREFIX}*-*"):
                owner = folder.name[len(PREFIX) :].split("-")[0]
                if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                    with contextlib.suppress(OSError):
                        folder.rmdir()


@contextlib.contextmanager
def box(memory_bytes: int, processes: int) -> Iterator[Box | None]:
    """A box for one run, ended (its processes killed, its cgroups removed) on the way out."""
    made = Box.make(memory_bytes, processes)
    try:
        yield made
    finally:
        if made is not None:
            made.end()


# Without a cgroup: the run's processes looked at from outside.


async def watch(memory_bytes: int, processes: int, uid: int | None, started: int) -> str:
    """Returns only when the run's processes, together, are over a limit: what was over. They
    are those of its uid (as root), else the process started and its descendants (inside a
    pid namespace, orphans stay among them; at the level none, one that leaves is lost)."""
    while True:
        await asyncio.sleep(WATCH_S)
        resident, count = await asyncio.to_thread(_usage, uid, started)
        # guard: without-box-watch-bounds-memory
        if resident > memory_bytes:
            return f"memory limit ({memory_bytes >> 20} MB) exceeded by the run's processes"
        # guard: without-box-watch-bounds-processes
        if count > processes:
            return f"process limit ({processes}) exceeded by the run's processes"


def _usage(uid: int | None, started: int) -> tuple[int, int]:
    """(resident bytes, processes) of the run's processes."""
    owners: dict[int, int] = {}  # pid: its uid (as root), else its parent
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if uid is not None:
                    status = Path(f"/proc/{name}/status").read_bytes()
                    owners[int(name)] = int(status.split(b"\nUid:", 1)[1].split()[0])
                else:
                    stat = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()
                    owners[int(name)] = int(stat[1])
            except (OSError, IndexError, ValueError):
                continue
    if uid is not None:
        ours = [pid for pid, owner in owners.items() if owner == uid]
    else:
        ours, frontier = [started], [started]
        children: dict[int, list[int]] = {}
        for pid, parent in owners.items():
            children.setdefault(parent, []).append(pid)
        while frontier:
            frontier = [child for pid in frontier for child in children.get(pid, [])]
            ours += frontier
    resident = 0
    for pid in ours:  # proportional: a page shared by n of them counts 1/n in each
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_bytes()
            resident += int(rollup.split(b"\nPss:", 1)[1].split()[0]) * 1024
        except (OSError, IndexError, ValueError):
            continue
    return resident, len(ours)
