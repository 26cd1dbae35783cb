"""The confinement of a sandboxed process, in this order (the standard library and
``loopbench.harness.errors`` only): it joins the run's
cgroups (the kernel's limits for the whole box, through descriptors the harness opened, so
that everything it starts is born inside); sets its resource limits; drops root for the
unprivileged uid of its run (root is exempt from RLIMIT_NPROC); installs an audit hook
(defence in depth, not the boundary: code in this process can get round it); and caps stdout
and stderr. The candidate's worker runs under it, and so does the test runner of a suite the
model wrote. (It inherits only the descriptors the sandbox passes it: its pipes, its output
and, for a runner, its results.)
"""

from __future__ import annotations

import io
import os
import resource
import sys

from loopbench.harness.errors import HarnessFault

TYPE_CHECKING = False  # typing costs a tenth of this process's start: for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    #: A check of an audit event's arguments: refuses by raising.
    Check = Callable[[str, tuple[Any, ...]], None]


class OutputLimit(HarnessFault):
    """A write past the output limit. Code that catches it hides nothing: the write was
    counted first (``Output.refused``), and in the candidate's worker the process has ended
    before it is raised."""


# The limits end the run; any other exception the candidate raises fails the test it is in.
LIMITS = (MemoryError, OutputLimit)


class Output:
    """What stdout and stderr may still write together (``left`` bytes), the writes refused
    past it, and what to do at each refused write before OutputLimit is raised (the
    candidate's worker ends there, so no ``except`` of the candidate's can catch it)."""

    def __init__(self, left: int, on_limit: Callable[[], None] | None = None) -> None:
        self.left, self.refused, self.on_limit = left, 0, on_limit


def confine(job: dict[str, Any], on_limit: Callable[[], None] | None = None) -> Output:
    """Everything above, for a job of the sandbox: its limits, uid and cgroup descriptors.
    ``on_limit`` runs at each write past the output limit, before OutputLimit is raised; the
    output, for its count of writes refused."""
    join_box(job["box_fds"])
    set_limits(job["limits"])
    # guard: root-drops-unprivileged-uid
    if os.getuid() == 0 and job["uid"] is not None:
        drop_root(job["uid"], job["gid"])
    readable = [os.path.realpath(p) for p in sys.path] + ["/dev/null", "/dev/urandom"]
    install_audit_hook(os.path.realpath(os.getcwd()), readable, job["limits"]["files"])
    output = Output(job["limits"]["output_bytes"], on_limit)
    sys.stdout, sys.stderr = CappedWriter(1, output), CappedWriter(2, output)
    return output


def join_box(fds: list[int]) -> None:
    """Moves this process into the run's cgroups (one per hierarchy): each descriptor is a
    ``cgroup.procs`` the harness opened, and "0" names the writer. Everything it starts
    later is born inside, under the box's memory and process limits."""
    for fd in fds:
        # guard: worker-joins-run-box-before
        os.write(fd, b"0")
        os.close(fd)


def set_limits(limits: dict[str, Any]) -> None:
    cpu = limits["cpu_s"]
    # guard: cpu-limit
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL
    memory = limits["memory_mb"] * 1024 * 1024
    # guard: memory-limit-process
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def drop_root(uid: int, gid: int) -> None:
    """Become the unprivileged uid. Its interpreter may sit where that uid cannot reach
    (pyenv under a 0700 /root), so the stdlib stays importable through descriptors opened
    first: a process may always follow its own /proc/self/fd links."""
    folders = [p for p in sys.path if os.path.isdir(p)]
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in folders]
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    moved = {folder: f"/proc/self/fd/{fd}" for folder, fd in zip(folders, fds, strict=True)}
    sys.path[:] = moved.values()
    sys.path_importer_cache.clear()
    for module in list(sys.modules.values()):  # packages already imported (encodings...)
        path = getattr(module, "__path__", None)
        if isinstance(path, list):
            path[:] = [_moved(p, moved) for p in path]


def _moved(path: str, moved: dict[str, str]) -> str:
    for folder, fd_path in moved.items():
        if path == folder or path.startswith(folder + "/"):
            return fd_path + path[len(folder) :]
    return path


# Audit events refused outright: new processes, signals to others, sockets, ctypes, limits.
# fmt: off
# guard: audit-hook-fork
PROCESS_EVENTS = (
    "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.kill",
    "os.killpg", "subprocess.", "pty.", "signal.pthread_kill", "socket.", "ctypes.dlopen",
    "ctypes.dlsym", "resource.",
)
# fmt: on
# Modules whose calls raise no audit event: processes (fork_exec), shared memory outside the
# work directory, a database engine that opens files itself, and raw memory.
REFUSED_IMPORTS = frozenset({"_posixsubprocess", "_posixshmem", "_sqlite3", "_ctypes"})
PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "os.chdir"})
# Events that change the filesystem: (the positions of their paths, of their dir_fds). Their
# paths must lie in the working directory.
WRITE_EVENTS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "os.mkdir": ((0,), (2,)),
    "os.remove": ((0,), (1,)),
    "os.rmdir": ((0,), (1,)),
    "os.rename": ((0, 1), (2, 3)),
    "os.link": ((0, 1), (2, 3)),
    "os.symlink": ((1,), (2,)),
    "os.chmod": ((0,), (2,)),
    "os.chown": ((0,), (3,)),
    "os.utime": ((0,), (3,)),
    "os.truncate": ((0,), ()),
    "os.setxattr": ((0,), ()),
    "os.removexattr": ((0,), ()),
}
NEW_ENTRY_EVENTS = frozenset({"os.mkdir", "os.link", "os.symlink"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def install_audit_hook(workdir: str, readable: list[str], files: int) -> None:
    """Refuses PROCESS_EVENTS and REFUSED_IMPORTS; paths outside the working directory
    except reads under ``readable`` (the stdlib); paths it cannot vouch for (a ``..``, or
    relative to a descriptor it cannot see); and more than ``files`` new files and folders.
    What it refuses, and the checks that refuse it, are bound here, not read from this
    module, which the candidate can reach (and it can reach the hook too: defence in depth)."""
    process_events, refused_imports = PROCESS_EVENTS, REFUSED_IMPORTS
    path_events, write_events, refuse = PATH_EVENTS, WRITE_EVENTS, _refuse
    check_open, check_write = _path_checks(workdir, readable, files)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import":
            # guard: imports-reach-past-hook-refused
            if args[0] in refused_imports:
                raise ImportError(f"sandbox: import {args[0]} is not allowed", name=args[0])
        # guard: audit-hook-paths-outside-work
        elif event in path_events:
            check_open(event, args)
        # guard: writes-stay-work-directory
        elif event in write_events:
            check_write(event, args)
        elif event.startswith(process_events):
            refuse(event)

    sys.addaudithook(hook)


def _refuse(what: str) -> NoReturn:
    raise PermissionError(f"sandbox: {what} is not allowed")


def _path_checks(workdir: str, readable: list[str], files: int) -> tuple[Check, Check]:
    """The hook's checks of the paths an event names: of an open (or a listing, a chdir),
    then of a change to the filesystem (WRITE_EVENTS). Both count the new files and folders
    against ``files``."""
    write_events, new_entry_events, refuse = WRITE_EVENTS, NEW_ENTRY_EVENTS, _refuse
    write_flags, tmpfile = WRITE_FLAGS, getattr(os, "O_TMPFILE", 0)
    created = [0]

    def under(path: str, roots: list[str]) -> bool:
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    def resolve(event: str, raw: Any) -> str:
        path = os.fsdecode(raw)
        # guard: paths-with-refused
        if ".." in path.split("/"):
            refuse(f"{event} {path!r} (a '..')")
        return os.path.realpath(path)

    def create(event: str, path: str) -> None:
        created[0] += 1
        # guard: new-files-counted
        if created[0] > files:
            refuse(f"{event} {path!r} (more than {files} new files)")

    def check_open(event: str, args: tuple[Any, ...]) -> None:
        if not args or isinstance(args[0], int) or args[0] is None:
            return  # a descriptor already open, or the working directory itself
        mode, flags = (args[1], args[2]) if event == "open" else ("r", 0)
        # guard: descriptor-relative-open-refused
        if mode is None and not os.path.isabs(os.fsdecode(args[0])):
            refuse(f"os.open {args[0]!r} (relative: its dir_fd is not known)")
        path = resolve(event, args[0])
        writes = isinstance(flags, int) and flags & write_flags
        if under(path, [workdir]):
            new = isinstance(flags, int) and flags & (os.O_CREAT | tmpfile)
            if new and ((tmpfile and flags & tmpfile == tmpfile) or not os.path.lexists(path)):
                create(event, path)
            return
        if not writes and not any(c in (mode or "") for c in "wax+") and under(path, readable):
            return
        refuse(f"{event} {path!r}")

    def check_write(event: str, args: tuple[Any, ...]) -> None:
        paths, dir_fds = write_events[event]
        if any(fd not in (None, -1) for i in dir_fds for fd in args[i : i + 1]):
            refuse(f"{event} relative to a descriptor")
        for i in paths:
            if not isinstance(args[i], int) and not under(resolve(event, args[i]), [workdir]):
                refuse(f"{event} {os.fsdecode(args[i])!r}")
        if event in new_entry_events:
            create(event, os.fsdecode(args[paths[-1]]))

    return check_open, check_write


class CappedWriter(io.TextIOBase):
    """A text stream that passes on what ``output`` has left (shared by stdout and stderr);
    past it, it writes nothing more: each write is counted, ``output.on_limit`` runs, and
    OutputLimit is raised."""

    def __init__(self, fd: int, output: Output) -> None:
        self.fd, self.output = fd, output

    def write(self, text: str) -> int:
        data = str(text).encode("utf-8", "replace")
        output = self.output
        # guard: output-cap
        if len(data) > output.left:
            output.left = 0
            output.refused += 1
            # guard: output-limit-ends-worker-first
            if output.on_limit is not None:
                output.on_limit()
            raise OutputLimit()
        output.left -= len(data)
        os.write(self.fd, data)
        return len(text)
