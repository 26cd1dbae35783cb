"""What a run leaves on this machine, removed after it.

Every run has a folder of its own (its work directory at the level none), removed with all
below it once its processes are gone. At the level none as root, the run's uid is its own, so
whatever that uid owns when the run has ended is the run's: the ``sweep`` removes its entries
in every folder any user may write to (``shared_folders``: /tmp, /var/tmp, /dev/shm,
/run/lock and the like) and its System V shared memory, message queues and semaphores (those
of this machine's IPC namespace, which the level none shares). Under bwrap and unshare, /tmp,
/dev/shm and IPC are the run's own namespaces and tmpfs, gone with it.

A candidate may leave a tree of any depth: 3,000 nested folders are past both the stack of a
recursive removal and the longest path a call takes. So a tree is removed without recursion
and by descriptor, two open at a time, going down by name and up by "..", never through a
link, checking on the way up that each folder is still where it was found. What cannot be
removed is left; a removal never raises, so a run that left a mess cannot make later runs
fail.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import stat
from pathlib import Path

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Where folders any user may write to are looked for: these, and the folders in each.
_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")
_PARENTS = ("/", "/var", "/run", "/dev", "/var/lib", "/var/cache", "/var/spool", "/var/local")
IPC_RMID = 0


def remove_tree(path: str | Path) -> None:
    """Removes ``path`` (a file, a link, or a folder with all below it, however deep)."""
    parent, name = os.path.split(os.path.abspath(path))
    try:
        fd = os.open(parent or "/", _FOLDER)
    except OSError:
        return
    try:
        _remove_entry(fd, name)
    finally:
        os.close(fd)


def _remove_entry(parent: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=parent)
    except IsADirectoryError:
        _remove_folder(parent, name)
    except OSError:
        pass


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _open_folder(parent: int, name: str) -> int | None:
    try:
        return os.open(name, _FOLDER, dir_fd=parent)
    except PermissionError:  # not as root: a folder of the same user's, made unreadable
        with contextlib.suppress(OSError):
            os.chmod(name, 0o700, dir_fd=parent)
            return os.open(name, _FOLDER, dir_fd=parent)
    except OSError:
        pass
    return None


def _empty(fd: int) -> list[str]:
    """Unlinks every entry of the open folder but its folders, whose names it returns."""
    if os.geteuid() != 0:  # a folder of the same user's, made read-only
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o700)
    folders = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    else:
                        os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    continue
    except OSError:
        pass
    return folders


def _remove_folder(parent: int, name: str) -> None:
    """Removes the folder ``name`` of the folder open as ``parent`` and all below it, depth
    first, without recursion: a frame per folder on the way down (its name, its parent's
    identity, its folders not yet removed), one descriptor held besides ``parent``."""
    fd = _open_folder(parent, name)
    if fd is None:
        return
    frames = [(name, _identity(parent), _empty(fd))]
    try:
        while frames:
            below = frames[-1][2]
            if below:
                child_name, here = below.pop(), _identity(fd)
                child = _open_folder(fd, child_name)
                if child is None:
                    continue
                fd, above = child, fd
                os.close(above)
                frames.append((child_name, here, _empty(fd)))
                continue
            done, parent_identity, _ = frames.pop()
            up = os.open("..", _FOLDER, dir_fd=fd)
            fd, below_fd = up, fd
            os.close(below_fd)
            # guard: tree-moved-while-removed-left
            if _identity(fd) != parent_identity:
                return  # moved while it was being removed: what is left stays
            with contextlib.suppress(OSError):
                os.rmdir(done, dir_fd=fd)
    except OSError:
        return
    finally:
        os.close(fd)


# At the level none, as root: what the run's uid made.


def sweep(uid: int) -> None:
    """Removes what ``uid`` (a run's own) left: its System V IPC objects, and each entry it
    owns in the folders any user may write to, or in a folder below one of them that any
    user may write to as well. Only as root, where the uid is the run's own."""
    # guard: at-level-none-uid-system
    remove_ipc(uid)
    for top in shared_folders():
        folders = [top]
        while folders:
            folder = folders.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                # guard: at-level-none-what-run
                if info.st_uid == uid:
                    remove_tree(entry.path)
                elif entry.is_dir(follow_symlinks=False) and info.st_mode & 0o002:
                    folders.append(entry.path)


@functools.cache
def shared_folders() -> tuple[str, ...]:
    """The folders here that any user may write to (found once): those of _PLACES that are,
    and those in _PARENTS, each once (not through a link: /var/lock is /run/lock)."""
    found: dict[tuple[int, int], str] = {}
    candidates = list(_PLACES)
    for parent in _PARENTS:
        with contextlib.suppress(OSError), os.scandir(parent) as entries:
            candidates += [entry.path for entry in entries]
    for path in candidates:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        # guard: shared-folders-world-writable-ones
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
            found.setdefault((info.st_dev, info.st_ino), path)
    return tuple(found.values())


# System V IPC: /proc/sysvipc/{shm,msg,sem} list this IPC namespace's objects, one a line
# under a header naming the columns; each is removed by its id.

_IPC_IDS = {"shm": "shmid", "msg": "msqid", "sem": "semid"}


def ipc_objects(uid: int) -> list[tuple[str, int]]:
    """(kind, id) of each System V IPC object ``uid`` owns or made."""
    found = []
    for kind, id_column in _IPC_IDS.items():
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        header = lines[0].split()
        try:
            ident, owner, creator = (header.index(c) for c in (id_column, "uid", "cuid"))
        except ValueError:
            continue
        for line in lines[1:]:
            fields = line.split()
            try:
                if uid in (int(fields[owner]), int(fields[creator])):
                    found.append((kind, int(fields[ident])))
            except (IndexError, ValueError):
                continue
    return found


def remove_ipc(uid: int) -> None:
    """Removes the System V IPC objects ``uid`` owns or made (IPC_RMID; as root)."""
    objects = ipc_objects(uid)
    if not objects:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, ident in objects:
        if kind == "shm":
            libc.shmctl(ident, IPC_RMID, None)
        elif kind == "msg":
            libc.msgctl(ident, IPC_RMID, None)
        else:
            libc.semctl(ident, 0, IPC_RMID)
