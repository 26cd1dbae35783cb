"""How isolated the sandbox is: the isolation levels, the command that runs the suite runner
at each, which one works here, and what a weaker one leaves open.

- ``bwrap``: bubblewrap. Fresh namespaces (no network, own pids); a filesystem of /usr,
  /bin, /lib and the interpreter read-only, the runner read-only at /loopbench, a fresh
  /proc and /dev, and the working directory /sandbox, a tmpfs of ``disk_mb`` (bubblewrap
  0.8 on; older ones bind ``work/``); the root read-only; nothing else of this machine
  (home, keys, the repository).
- ``unshare``: ``unshare --net``: no network, but this machine's files are visible.
- ``none``: the runner's own measures only.

The level is chosen once per process by running a trivial command at each
(``LOOPBENCH_SANDBOX=bwrap|unshare|none`` forces one).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal, get_args

Isolation = Literal["bwrap", "unshare", "none"]
LEVELS: tuple[Isolation, ...] = get_args(Isolation)
MB = 1024 * 1024
WORKDIR = "/sandbox"  # the work directory's path inside bwrap
BWRAP_RUNNER = "/loopbench/suite_runner.py"  # the runner's path inside bwrap


class SandboxError(Exception):
    """The sandbox cannot run here as asked (a forced isolation level that does not work, no
    uid free), or a run's processes would not die."""


def interpreter() -> str:
    """The base interpreter (a venv's python resolves to it), never the venv."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def is_root() -> bool:
    return os.geteuid() == 0


def child_env(home: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8"}


@functools.cache
def _sized_tmpfs() -> bool:
    """Whether this bubblewrap can bound a tmpfs (``--size``, 0.8 on)."""
    try:
        done = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in done.stdout


def _bwrap(runner: Path, work: Path, disk_bytes: int, info_fd: int | None) -> list[str]:
    if is_root():  # no user namespace, so the runner can become a real unprivileged uid
        spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        spaces += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        spaces = ["--unshare-all"]
    argv = ["bwrap", *spaces, "--die-with-parent", "--new-session", "--clearenv"]
    for name, value in child_env(WORKDIR).items():
        argv += ["--setenv", name, value]
    argv += ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for top in ("/bin", "/lib", "/lib64"):
        if os.path.islink(top):  # merged /usr
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        argv += ["--ro-bind", prefix, prefix]
    if _sized_tmpfs():
        argv += ["--perms", "1777", "--size", str(disk_bytes), "--tmpfs", WORKDIR]
    else:  # an older bubblewrap: this machine's disk, bounded by the audit hook only
        argv += ["--bind", str(work), WORKDIR]
    argv += ["--ro-bind", str(runner), BWRAP_RUNNER, "--chdir", WORKDIR]
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/"]
    if info_fd is not None:  # where bubblewrap says its pid namespace's init's pid
        argv += ["--info-fd", str(info_fd)]
    return [*argv, "--"]


def command(
    isolation: Isolation, runner: Path, work: Path, disk_bytes: int, info_fd: int | None = None
) -> list[str]:
    """The command that runs ``runner`` in ``work`` at this isolation level."""
    python = [interpreter(), "-I", "-S", "-B"]
    if isolation == "bwrap":
        return [*_bwrap(runner, work, disk_bytes, info_fd), *python, BWRAP_RUNNER]
    if isolation == "unshare":
        user = [] if is_root() else ["--user", "--map-root-user"]
        return ["unshare", *user, "--net", "--", *python, str(runner)]
    return [*python, str(runner)]


@functools.cache
def probe(isolation: Isolation) -> str:
    """ "" when this level works here, else why not: runs a trivial command through it."""
    with tempfile.TemporaryDirectory(prefix="loopbench-probe-") as tmp:
        runner = Path(tmp, "suite_runner.py")
        runner.touch()
        argv = [*command(isolation, runner, Path(tmp), MB)[:-1], "-c", "import os"]
        try:
            done = subprocess.run(
                argv, cwd=tmp, env=child_env(tmp), capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
    return "" if done.returncode == 0 else done.stderr.strip() or f"exit code {done.returncode}"


def choose(isolation: Isolation | None = None) -> Isolation:
    """The level asked for (argument, else LOOPBENCH_SANDBOX), checked; else the best that
    works here."""
    asked = isolation or os.environ.get("LOOPBENCH_SANDBOX") or None
    if asked is None:
        best = next((level for level in LEVELS if not probe(level)), None)
        if best is None:
            raise SandboxError(f"no sandbox works here, not even 'none': {probe('none')}")
        return best
    if asked not in LEVELS:
        raise SandboxError(f"unknown sandbox {asked!r}; choose one of {', '.join(LEVELS)}")
    why = probe(asked)
    if why:
        raise SandboxError(
            f"sandbox {asked!r} does not work here ({why}); install bubblewrap "
            "(apt-get install bubblewrap) or unset LOOPBENCH_SANDBOX to use the best available"
        )
    return asked


def warning(isolation: Isolation) -> str:
    """What a level leaves open, for the CLI to print; "" for bwrap 0.8 on."""
    hook = (
        "its audit hook (files outside its directory, processes, sockets, a count of new "
        "files) is defence in depth and can be bypassed by the code it watches"
    )
    if isolation == "bwrap":
        if _sized_tmpfs():
            return ""
        return (
            "sandbox: bwrap without --size (bubblewrap older than 0.8): the work directory is "
            f"on this machine's disk, and {hook}; upgrade bubblewrap"
        )
    if is_root():
        who = "a uid of its own"
    else:
        who = (
            "this same user, so the harness's own files and environment (its API keys) may be "
            "reachable, and a process that leaves its process group can outlive the run"
        )
    if isolation == "unshare":
        where = "unshare (bubblewrap missing or not working): it has no network"
    else:
        where = "none (neither bubblewrap nor unshare works here): it has the network"
    return (
        f"sandbox: {where} and sees this machine's files, as {who}; {hook}; its work "
        "directory is on this machine's disk; install bubblewrap (apt-get install bubblewrap)"
    )
