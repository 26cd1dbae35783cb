"""How isolated the sandbox is: the isolation levels, the command that runs a program of the
sandbox (the candidate's worker, or the test runner of a suite the model wrote) at each,
which one works here, and what a weaker one leaves open.

- ``bwrap``: bubblewrap. Fresh namespaces (no network, own pids, IPC, hostname, cgroups,
  and, when not root, users); a filesystem of /usr, /bin, /lib and the interpreter
  read-only, the sandbox's programs read-only at /loopbench, a fresh /proc and /dev, and
  three tmpfs of ``disk_mb`` each: the working directory /sandbox, /tmp and /dev/shm
  (bubblewrap 0.8 on; older ones cannot bound them); the root read-only; nothing else of
  this machine (home, keys, the repository, other processes).
- ``unshare``: the same shape built with util-linux: ``unshare`` makes fresh mount, pid,
  network, IPC and hostname namespaces (and a user namespace when not root), and a shell
  script mounts a tmpfs of ``disk_mb`` as the new root, binds /usr, /bin, /lib, the
  interpreter and /loopbench into it read-only, mounts a fresh /proc, binds the few devices
  needed, and pivots into it; /sandbox, /tmp and /dev/shm are folders of that tmpfs.
- ``none``: the runner's own measures only: this machine's files, network, /tmp and
  /dev/shm. As root, what the run's uid left in the folders any user may write to (/tmp,
  /var/tmp, /dev/shm, /run/lock...) and its System V IPC objects are removed after it
  (``loopbench.sandbox.leftovers.sweep``).

The level is chosen once per process by running a trivial command at each
(``LOOPBENCH_SANDBOX=bwrap|unshare|none`` forces one).
"""

from __future__ import annotations

import atexit
import compileall
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal, get_args

from loopbench.harness import errors
from loopbench.harness.errors import BadInput

Isolation = Literal["bwrap", "unshare", "none"]
LEVELS: tuple[Isolation, ...] = get_args(Isolation)
MB = 1024 * 1024
WORKDIR = "/sandbox"  # the work directory's path inside bwrap and unshare
PROGRAMS = "/loopbench"  # where the sandbox's programs are, inside bwrap and unshare


class SandboxError(BadInput):
    """The sandbox cannot run here as asked (a forced isolation level that does not work, no
    uid free), or a run's processes would not die."""


# The sandbox's two programs and the modules they import (the standard library, and of
# loopbench only these and PROGRAM_ERRORS).
PROGRAM_MODULES = ("candidate_worker", "suite_runner", "plain_data", "confine", "remote")
#: The one module of loopbench's harness the programs import: the error families their
#: exceptions derive from (it imports nothing itself).
PROGRAM_ERRORS = Path(errors.__file__)


@functools.cache
def programs_folder() -> Path:
    """A copy of the sandbox's programs and the modules they import, as
    ``FOLDER/loopbench/sandbox/`` and ``FOLDER/loopbench/harness/errors.py`` (what a
    sandboxed process sees at /loopbench, read-only), compiled beside them (a run's
    processes only read them): made once per process, this process's own (as root, no run's
    uid may change it), and removed when it exits."""
    folder = Path(tempfile.mkdtemp(prefix="loopbench-programs-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    package, harness = folder / "loopbench" / "sandbox", folder / "loopbench" / "harness"
    package.mkdir(parents=True)
    harness.mkdir()
    for parent in (package.parent, package, harness):  # not loopbench's own API: empty
        (parent / "__init__.py").write_bytes(b"")
    for name in PROGRAM_MODULES:
        shutil.copyfile(Path(__file__).with_name(f"{name}.py"), package / f"{name}.py")
    shutil.copyfile(PROGRAM_ERRORS, harness / PROGRAM_ERRORS.name)
    compileall.compile_dir(folder, quiet=1, workers=1)
    for path in (folder, *folder.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


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


def _bwrap(programs: Path, disk_bytes: int, info_fd: int | None) -> list[str]:
    if is_root():  # no user namespace, so the runner can become a real unprivileged uid
        spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        spaces += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        spaces = ["--unshare-all"]
    argv = ["bwrap", *spaces, "--die-with-parent", "--new-session", "--clearenv"]
    for name, value in child_env(WORKDIR).items():
        argv += ["--setenv", name, value]
    # guard: bubblewrap-shows-none-this-machine
    argv += ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for top in ("/bin", "/lib", "/lib64"):
        if os.path.islink(top):  # merged /usr
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        argv += ["--ro-bind", prefix, prefix]
    argv += ["--ro-bind", str(programs), PROGRAMS, "--proc", "/proc", "--dev", "/dev"]
    # guard: bubblewrap-tmp-dev-shm-run
    for folder in (WORKDIR, "/tmp", "/dev/shm"):  # each private, and gone with the run
        # guard: bubblewrap-bounds-tmpfs
        size = ["--size", str(disk_bytes)] if _sized_tmpfs() else []
        argv += ["--perms", "1777", *size, "--tmpfs", folder]
    argv += ["--chdir", WORKDIR, "--remount-ro", "/"]
    if info_fd is not None:  # where bubblewrap says its pid namespace's init's pid
        argv += ["--info-fd", str(info_fd)]
    return [*argv, "--"]


# The unshare level's root: run by /bin/sh as the first process of fresh namespaces, with
# the new root (an empty folder), its size, the programs' folder and the interpreter's
# prefix as arguments, then the command.
# guard: unshare-pivots-into-root-own
UNSHARE_ROOT = r"""
set -eu
root=$1 size=$2 programs=$3 prefix=$4 path=$PATH
shift 4
PATH=/usr/sbin:/sbin:/usr/bin:/bin
mount -t tmpfs -o "size=$size,mode=0755,nosuid,nodev" loopbench "$root"
cd "$root"
devices="dev/null dev/zero dev/full dev/random dev/urandom"
mkdir -p usr etc proc dev/shm tmp sandbox loopbench .old ".$prefix"
chmod 1777 tmp dev/shm sandbox
touch etc/ld.so.cache $devices
bind() { mount --bind -o ro,nosuid,nodev "$1" "$2"; }  # bound, then made read-only
bind /usr usr
for top in /bin /lib /lib64; do
    if [ -L "$top" ]; then ln -s "$(readlink "$top")" ".$top"
    elif [ -d "$top" ]; then mkdir ".$top" && bind "$top" ".$top"; fi
done
case "$prefix" in /usr/*) ;; *) bind "$prefix" ".$prefix" ;; esac
if [ -e /etc/ld.so.cache ]; then bind /etc/ld.so.cache etc/ld.so.cache; fi
bind "$programs" loopbench
for device in $devices; do mount --bind "/$device" "$device"; done
ln -s /proc/self/fd dev/fd
mount -t proc -o nosuid,nodev,noexec proc proc
pivot_root . .old
cd /
umount -l /.old
rmdir /.old
cd /sandbox
PATH=$path
exec "$@"
"""


def _unshare(programs: Path, root: Path, disk_bytes: int) -> list[str]:
    spaces = ["--mount", "--pid", "--net", "--ipc", "--uts", "--propagation", "private"]
    user = [] if is_root() else ["--user", "--map-root-user"]
    death = ["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []
    prefix = os.path.realpath(sys.base_prefix)
    script = ["/bin/sh", "-c", UNSHARE_ROOT, "sh", str(root), str(disk_bytes), str(programs)]
    return [*death, "unshare", *user, *spaces, "--kill-child", "--", *script, prefix]


def command(
    isolation: Isolation,
    programs: Path,
    module: str | None,
    run_dir: Path,
    disk_bytes: int,
    info_fd: int | None = None,
) -> list[str]:
    """The command that runs ``module``'s ``main()`` (a module of the ``sandbox`` package
    in ``programs``; None runs nothing, to probe) at this isolation level; ``run_dir`` holds
    ``work/`` (the working directory at the level none) and ``root/`` (the new root at the
    level unshare)."""
    if isolation == "bwrap":
        return [*_bwrap(programs, disk_bytes, info_fd), *_python(PROGRAMS, module)]
    if isolation == "unshare":
        return [*_unshare(programs, run_dir / "root", disk_bytes), *_python(PROGRAMS, module)]
    return _python(str(programs), module)


def _python(folder: str, module: str | None) -> list[str]:
    """The base interpreter running ``module.main()`` from ``folder``: imported, not run as
    a script, so that it loads from the compiled files beside it."""
    code = "import os" if module is None else (
        f"import sys; sys.path.insert(0, {folder!r}); import {module} as m; m.main()"
    )  # fmt: skip
    return [interpreter(), "-I", "-S", "-B", "-c", code]


def working_directory(isolation: Isolation, run_dir: Path) -> str:
    """The candidate's working directory (and HOME) as it sees it."""
    return WORKDIR if isolation != "none" else str(run_dir / "work")


@functools.cache
def probe(isolation: Isolation) -> str:
    """ "" when this level works here, else why not: runs a trivial command through it."""
    with tempfile.TemporaryDirectory(prefix="loopbench-probe-") as tmp:
        for folder in ("programs", "root", "work"):
            Path(tmp, folder).mkdir()
        argv = command(isolation, Path(tmp, "programs"), None, Path(tmp), MB)
        try:
            done = subprocess.run(
                argv, cwd=tmp, env=child_env(tmp), capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
    return "" if done.returncode == 0 else done.stderr.strip() or f"exit code {done.returncode}"


def asked_by(isolation: Isolation | None = None) -> str:
    """How a level was asked for (``isolation='none'``, ``LOOPBENCH_SANDBOX=none``); "" when
    none was, and the best that works is chosen."""
    if isolation:
        return f"isolation={isolation!r}"
    forced = os.environ.get("LOOPBENCH_SANDBOX")
    return f"LOOPBENCH_SANDBOX={forced}" if forced else ""


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


def warning(isolation: Isolation, boxed: bool = True, asked: str = "") -> str:
    """What a level, and a machine where no cgroups can be made (not ``boxed``), leave open,
    for the CLI to print; "" for bwrap 0.8 on and for unshare, with cgroups. ``asked``: how
    the level was asked for (``asked_by``), "" when it was chosen as the best that works."""
    notes = []
    if isolation == "bwrap" and not _sized_tmpfs():
        notes.append(
            "bwrap without --size (bubblewrap older than 0.8): the work directory, /tmp and "
            "/dev/shm are tmpfs with no size of their own; upgrade bubblewrap"
        )
    if isolation == "none":
        who = (
            "a uid of its own"
            if is_root()
            else "this same user, so the harness's own files and environment (its API keys) "
            "are reachable, and a process that leaves its process group can outlive the run"
        )
        stronger = [level for level in LEVELS[:-1] if not probe(level)] if asked else []
        why = "neither bubblewrap nor unshare works here"
        # guard: level-asked-for-hand-said
        if asked:
            works = f"; {' and '.join(stronger)} {'work' if len(stronger) > 1 else 'works'} here"
            why = f"asked for by {asked}" + (works if stronger else f"; {why}")
        advice = "" if "bwrap" in stronger else "; install bubblewrap (apt-get install bubblewrap)"
        notes.append(
            f"none ({why}): the candidate has the network "
            f"and sees this machine's files, /tmp and /dev/shm, as {who}; its audit hook (files "
            "outside its directory, processes, sockets, a count of new files) is defence in "
            "depth and can be bypassed by the code it watches; its work directory is on this "
            f"machine's disk{advice}"
        )
    if not boxed:
        notes.append(
            "no cgroups can be made here (they need root and the memory and pids "
            "controllers): the memory and processes of a run together are watched from "
            "outside every 0.1 s, not bounded by the kernel"
        )
    return "; ".join(f"sandbox: {note}" for note in notes)
