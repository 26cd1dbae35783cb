"""Special files in every place loopbench reads an input file: a FIFO, a link to a FIFO, a
link to /dev/zero, a link to /dev/null and a socket, each put where a task set's files, a
suite, an experiment file, a price table, a response cache or a plugin should be.
``tests/hostile/test_special_files.py`` checks that each is refused in one line with exit
code 2; ``bench/special_inputs.py`` times the refusals.

Each case gets a folder of its own holding good inputs (a generated task set ``S``, a copy
of the coding set ``K``, experiment files, a price table, a response cache ``C``, a plugin,
a generated set ``G`` to be replaced), one of which is then made special. A command runs
in a fresh interpreter, in that folder, with its address space capped, so that a reader
that does not refuse what it is given hangs until the timeout or fails on memory instead
of filling the machine's.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.models.cache import ResponseCache

REPOSITORY = Path(__file__).resolve().parents[2]
REFERENCE_RUN = REPOSITORY / "results" / "reference" / "local-smollm2"
NOWHERE = ("--model", "fake", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0")
RUN = ("run", "--quiet", *NOWHERE, "--arm", "direct", "--limit", "1", "--out", "out")
#: The coding task read first (the first line of the coding set's tasks.jsonl).
SUITE = "K/suites/expression_evaluator"
PRICES = 'as_of = "2025-08-01"\n[models.fake]\ninput = 1.0\noutput = 2.0\n'

#: What stands where a file should be, and the word the refusal names it by.
KINDS = {
    "fifo": "FIFO",
    "fifo-link": "FIFO",
    "zero-link": "device",
    "null-link": "device",
    "socket": "socket",
}

#: A command reading a file is given far less than this; a reader of /dev/zero runs out.
ADDRESS_SPACE = 2**30
#: Long enough for a loaded machine to start Python; a FIFO that is opened waits for ever.
HANG_S = 120.0
CHILD = (
    f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE},) * 2); "
    "from loopbench.harness.cli.main import main; main(sys.argv[1:])"
)


@dataclass(frozen=True)
class Position:
    """One place an input file is read: the file made special and the command reading it."""

    name: str
    target: str
    """The file made special, in the case's folder."""
    command: tuple[str, ...]
    named: str = ""
    """What the refusal must name, if not the target's file name."""
    says_kind: bool = True
    """The refusal says what the file is (a FIFO, a device, a socket)."""


POSITIONS = [
    Position("tasks.jsonl", "S/tasks.jsonl", (*RUN, "--tasks", "S")),
    Position("taskset.toml", "S/taskset.toml", (*RUN, "--tasks", "S")),
    Position("encyclopedia.json", "S/encyclopedia.json", (*RUN, "--tasks", "S")),
    Position("feedback.py", f"{SUITE}/feedback.py", (*RUN, "--tasks", "K")),
    Position("heldout.py", f"{SUITE}/heldout.py", (*RUN, "--tasks", "K")),
    Position("reference.py", f"{SUITE}/reference.py", (*RUN, "--tasks", "K")),
    Position("tasks-check", "S/tasks.jsonl", ("tasks", "check", "S")),
    Position("grade-task", "K/tasks.jsonl", ("grade", "--task", "K/q1", "--code-file", "c.py")),
    Position("experiment", "exp.toml", ("run", "--quiet", *NOWHERE, "--experiment", "exp.toml")),
    Position(
        "experiment-prices",
        "prices.toml",
        ("run", "--quiet", *NOWHERE, "--experiment", "priced.toml", "--limit", "1"),
    ),
    Position("run-prices", "prices.toml", (*RUN, "--tasks", "S", "--prices", "prices.toml")),
    Position(
        "table-prices", "prices.toml", ("table", str(REFERENCE_RUN), "--prices", "prices.toml")
    ),
    Position(
        "report-prices",
        "prices.toml",
        ("report", str(REFERENCE_RUN), "--prices", "prices.toml", "-o", "report.html"),
    ),
    Position(
        "cache", "C/responses.sqlite", (*RUN, "--tasks", "S", "--cache", "C"), says_kind=False
    ),
    Position("plugin", "plug.py", (*RUN, "--tasks", "S", "--plugin", "plug")),
]


@dataclass(frozen=True)
class Case:
    position: Position
    kind: str

    @property
    def id(self) -> str:
        return f"{self.position.name}-{self.kind}"


CASES = [Case(position, kind) for position in POSITIONS for kind in KINDS]


@dataclass(frozen=True)
class Refusal:
    """What a command did with a special file: its exit code, stderr and wall time; a
    command still running at ``HANG_S`` is killed and said to hang."""

    returncode: int | None
    stderr: str
    seconds: float

    @property
    def hung(self) -> bool:
        return self.returncode is None


@contextmanager
def fixtures() -> Iterator[Path]:
    """A short-named folder (a socket's path is at most 107 bytes) holding the good inputs
    every case's folder starts from, in ``template``."""
    root = Path(tempfile.mkdtemp(prefix="lbsf-"))
    try:
        template = root / "template"
        template.mkdir()
        made = CliRunner().invoke(
            main, ["tasks", "generate", "--n", "3", "--out", str(template / "S")]
        )
        assert made.exit_code == 0, made.output
        shutil.copytree(template / "S", template / "G")
        shutil.copytree(REPOSITORY / "loopbench" / "tasks" / "coding", template / "K")
        ResponseCache(template / "C").close()
        (template / "exp.toml").write_text('arms = ["direct"]\ntasks = "S"\nlimit = 1\n')
        (template / "priced.toml").write_text(
            'arms = ["direct"]\ntasks = "S"\nprices = "prices.toml"\n'
        )
        (template / "prices.toml").write_text(PRICES)
        (template / "c.py").write_text("def evaluate(expression):\n    return 0.0\n")
        (template / "plug.py").write_text("")
        yield root
    finally:
        shutil.rmtree(root)


def prepare(root: Path, case: Case) -> Path:
    """The case's folder: the good inputs, with the case's file made special."""
    folder = root / case.id
    shutil.copytree(root / "template", folder, symlinks=True)
    target = folder / case.position.target
    assert target.is_file(), target
    target.unlink()
    make_special(target, case.kind, root / f"{case.id}.fifo")
    return folder


def make_special(path: Path, kind: str, spare: Path) -> None:
    """Put at ``path`` what ``kind`` names (``spare``: where a linked FIFO lives)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "fifo-link":
        os.mkfifo(spare)
        path.symlink_to(spare)
    elif kind in ("zero-link", "null-link"):
        path.symlink_to(f"/dev/{kind.removesuffix('-link')}")
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bound:
            bound.bind(str(path))  # the file stays when the socket closes
    else:
        raise ValueError(f"no kind of special file {kind!r}")


def refuse(folder: Path, case: Case) -> Refusal:
    """Run the case's command in ``folder``."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("LOOPBENCH_", "OPENAI_"))}
    env = {
        **keep,
        "HOME": str(folder),
        "MPLCONFIGDIR": str(folder),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
    }
    began = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *case.position.command],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as hung:
        said = hung.stderr.decode(errors="replace") if isinstance(hung.stderr, bytes) else ""
        return Refusal(None, said, time.monotonic() - began)
    return Refusal(done.returncode, done.stderr, time.monotonic() - began)
