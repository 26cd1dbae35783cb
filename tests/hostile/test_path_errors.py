"""Every command on paths it may not read or write, run as a user without permission (not
as root, who reads and writes whatever the permissions say): exit 2, exactly one line on
stderr, no traceback, and no file that was there changed. The same inputs in a read-only
folder are read as usual: only writing there is refused.

The commands and their path options are enumerated from the click group, so a new command
or a new path option fails ``test_every_path_option_of_every_command_has_a_case`` until a
case gives it an unreadable or unwritable path.

When the tests run as root, each command runs as uid 65534 (``setpriv``) if that user can
run this interpreter, else as root without the capabilities that bypass file permissions
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``), to whom a file's owner bits then apply as
to anyone; the fixtures are owned by that uid. Otherwise the tests' own user runs them.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.errors import is_path_error, path_problem
from loopbench.harness.cli.main import main
from loopbench.harness.models.cache import ResponseCache

REPO = Path(__file__).resolve().parents[2]
NOWHERE = "--model fake --base-url http://127.0.0.1:9/v1 --max-retries 0 --quiet --arm direct"
RUN = f"run {NOWHERE} --limit 1 --tasks T"
PRICES = 'as_of = "2025-08-01"\n[models.m]\ninput = 1.0\noutput = 2.0\n'

#: Options that are paths though not of click's Path type: (command, parameter).
TEXT_PATHS = {("run", "tasks_spec"), ("grade", "task_spec"), ("tasks list", "given")}
TEXT_PATHS |= {("serve-fake", "tasks")}  # a coding set its scripted coder answers
#: Where a case's paths may not be read or written (see ``places``).
HOSTILE = ("shut/", "closed/", "Rfiles", "Rtraces", "Wkept", "ro/", "afile/", "/proc/")
#: The cases also run on the path itself without permission (the others go the same way).
CLOSED_TOO = (
    "table {}",
    "report R --prices",
    "cache",
    "tasks check",
    "tasks list",
    "grade --task c",
    "judge",
    "run",
)


def _cases() -> list[tuple[str, str]]:
    """(id, the command line, run in the fixture folder) for every refusal."""
    cases = []
    # Under a folder without permission ("shut"), and the path itself without it ("closed").
    for line in (
        "table {}/R",
        "table R --prices {}/prices.toml",
        "compare {}/R R",
        "compare R {}/R",
        "failures {}/R",
        "report {}/R -o out/{}-report.html",
        "report R --prices {}/prices.toml -o out/{}-prices.html",
        "export {}/R -o out/{}.parquet",
        "plot {}/R --kind status -o out/{}.png",
        "power --from {}/R",
        "cost measured {}/R",
        "cache stats {}/C",
        "cache clear {}/C",
        "tasks check {}/T",
        "tasks list --tasks {}/T",
        "serve-fake --tasks {}/T",
        "grade --task coding/roman_numerals --code-file {}/code.py",
        "grade --task {}/T/q1 --code-file code.py",
        "grade --regrade {}/R",
        "grade --regrade R --prices {}/prices.toml",
        "grade --regrade R --cache {}/C",
        "judge sample {}/R --per-arm 2 --output out/{}-sample.csv",
        "judge calibrate {}/R --labels labels.csv",
        "judge calibrate R --labels {}/labels.csv",
        f"run {NOWHERE} --tasks {{}}/T --out out/{{}}-tasks",
        f"run {NOWHERE} --experiment {{}}/exp.toml --out out/{{}}-exp",
        RUN + " --out {}/R",
        RUN + " --prices {}/prices.toml --out out/{}-prices",
        RUN + " --cache {}/C --out out/{}-cache",
    ):
        cases.append((line.format("shut", "shut"), line.format("shut", "shut")))
        if line.startswith(CLOSED_TOO):
            cases.append((line.format("closed", "closed"), line.format("closed", "closed")))
    # A results folder that opens, but whose records or traces cannot be read.
    for line in (
        "table Rfiles",
        "compare Rfiles R",
        "failures Rfiles",
        "report Rfiles -o out/rfiles.html",
        "export Rfiles -o out/rfiles.csv --format csv",
        "plot Rfiles --kind status -o out/rfiles.png",
        "power --from Rfiles",
        "cost measured Rfiles",
        "table Rtraces --failures",
        "failures Rtraces",
        "report Rtraces -o out/rtraces.html",
        # A run's results folder whose records cannot be written: the runs it holds stay.
        RUN + " --out Wkept --retry-errors",
    ):
        cases.append((line, line))
    # Outputs in a read-only folder, under a regular file, and where nothing can be made.
    for line in (
        "report R -o ro/report.html",
        "table R -o ro/table.md",
        "table R -o afile/table.md",
        "judge sample R --per-arm 2 --output ro/sample.csv",
        "judge sample R --per-arm 2 --output afile/sample.csv",
        "export R -o ro/runs.parquet",
        "export R --format csv -o ro/runs.csv",
        "plot R --kind status -o ro/plot.png",
        "tasks generate --n 3 --out ro/new-set",
        "tasks generate --n 3 --out ro/T",
        "cache clear ro/C",
        RUN + " --out ro/new",
        RUN + " --out ro/R",
        RUN + " --cache ro/new-cache --out out/ro-cache",
        RUN + " --out afile/sub",
        RUN + " --cache afile/sub --out out/afile-cache",
        RUN + " --cache /proc/nope/c --out out/proc-cache",
        "report R -o afile/report.html",
        "tasks generate --n 3 --out afile/sub",
    ):
        cases.append((line, line))
    return cases


CASES = _cases()
#: Reading from a read-only folder works as from any other (writes go elsewhere).
READ_ONLY_READS = [
    "table ro/R",
    "table R --prices ro/prices.toml",
    "compare ro/R ro/R",
    "failures ro/R",
    "report ro/R -o out/read-only.html",
    "export ro/R -o out/read-only.parquet",
    "plot ro/R --kind status -o out/read-only.png",
    "cost measured ro/R",
    "tasks check ro/T",
]


def _unprivileged() -> tuple[list[str], int] | str:
    """The prefix that runs a command without the right to override file permissions, and
    the uid to own the fixtures; or why that cannot be done here."""
    if os.geteuid() != 0:
        return [], os.geteuid()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "running as root, and setpriv (util-linux) is missing to drop privileges"
    ways = [
        ([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"], 65534),
        ([setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"], 0),
    ]
    for prefix, uid in ways:
        if _denied(prefix, uid):
            return prefix, uid
    return "running as root, and neither uid 65534 nor root without CAP_DAC_OVERRIDE can run"


def _denied(prefix: list[str], uid: int) -> bool:
    """Whether ``prefix`` runs this interpreter with loopbench, and is refused a file of
    ``uid``'s without permissions."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe"
        probe.write_text("x")
        for path in (Path(folder), probe):
            os.chown(path, uid, uid)
        Path(folder).chmod(0o755)
        probe.chmod(0)
        check = "import loopbench.harness.cli.main, sys; open(sys.argv[1]).read()"
        done = subprocess.run(
            [*prefix, sys.executable, "-c", check, str(probe)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.returncode != 0 and "PermissionError" in done.stderr


WAY = _unprivileged()
pytestmark = pytest.mark.skipif(isinstance(WAY, str), reason=str(WAY))


@pytest.fixture(scope="module")
def places() -> Iterator[Path]:
    """A folder owned by the uid the commands run as, holding, each good in itself:

    R a results folder, T a generated task set, C a response cache, prices.toml, exp.toml,
    code.py; ``shut/`` (mode 000) and ``closed/`` (each entry mode 000) copies of them;
    Rfiles and Rtraces (R with runs.jsonl or traces.jsonl mode 000); Wkept, a run's folder
    whose runs.jsonl is read-only; ``ro/``, a read-only copy; ``afile``, a file; ``out/``.
    """
    assert not isinstance(WAY, str)
    _, uid = WAY
    root = Path(tempfile.mkdtemp(prefix="loopbench-paths-"))
    try:
        _fill(root)
        for path in [root, *root.rglob("*")]:
            os.chown(path, uid, uid, follow_symlinks=False)
        _lock(root)
        yield root
    finally:
        for path in [root, *root.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o700)
        shutil.rmtree(root)


def _fill(root: Path) -> None:
    root.chmod(0o755)
    shutil.copytree(REPO / "results/reference/local-smollm2", root / "R")
    made = CliRunner().invoke(main, ["tasks", "generate", "--n", "3", "--out", str(root / "T")])
    assert made.exit_code == 0, made.output
    ResponseCache(root / "C").close()
    (root / "prices.toml").write_text(PRICES)
    (root / "exp.toml").write_text('arms = ["direct"]\n')
    (root / "code.py").write_text("def f():\n    return 1\n")
    (root / "labels.csv").write_text("run_id,label\n")
    (root / "afile").write_text("a file\n")
    (root / "out").mkdir()
    run = [*shlex.split(RUN), "--tasks", str(root / "T"), "--out", str(root / "Wkept")]
    ran = CliRunner().invoke(main, run)
    assert ran.exit_code == 3, ran.output  # recorded; nothing graded (no endpoint listens)
    for copy in ("shut", "closed", "ro"):
        for name in ("R", "T", "C", "prices.toml", "exp.toml", "code.py", "labels.csv"):
            _copy(root / name, root / copy / name)
    for name, unread in (("Rfiles", "runs.jsonl"), ("Rtraces", "traces.jsonl")):
        _copy(root / "R", root / name)
        (root / name / unread).chmod(0)


def _lock(root: Path) -> None:
    for entry in (root / "closed").iterdir():
        entry.chmod(0)
    (root / "shut").chmod(0)
    (root / "Wkept" / "runs.jsonl").chmod(0o444)
    for path in sorted((root / "ro").rglob("*"), reverse=True):
        path.chmod(0o555 if path.is_dir() else 0o444)
    (root / "ro").chmod(0o555)


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)


def loopbench(root: Path, line: str) -> subprocess.CompletedProcess[str]:
    assert not isinstance(WAY, str)
    prefix, _ = WAY
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("LOOPBENCH_", "OPENAI_"))}
    env = {**keep, "HOME": str(root / "out"), "MPLCONFIGDIR": str(root / "out")}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "loopbench.harness.cli", *shlex.split(line)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _contents(root: Path) -> dict[str, str]:
    """A digest of every file the fixtures made (as root sees them; locks aside)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file() and path.name != ".lock" and "out" not in path.relative_to(root).parts
    }


Ran = dict[str, subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def ran(places: Path) -> Iterator[tuple[Ran, dict[str, str], dict[str, str]]]:
    """Every case's command line and what it did, run a few at once (each starts Python),
    with the fixtures' contents before and after."""
    before = _contents(places)
    lines = [line for _, line in CASES] + READ_ONLY_READS
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = dict(zip(lines, pool.map(lambda line: loopbench(places, line), lines), strict=True))
    yield done, before, _contents(places)


@pytest.mark.parametrize("line", [line for _, line in CASES], ids=[i for i, _ in CASES])
def test_a_path_that_cannot_be_read_or_written_is_one_line_and_exit_2(
    ran: tuple[Ran, dict[str, str], dict[str, str]], line: str
) -> None:
    done = ran[0][line]
    shown = f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    assert done.returncode == 2, shown
    assert "Traceback" not in done.stderr + done.stdout, shown
    assert len(done.stderr.splitlines()) == 1, shown
    assert done.stderr.startswith("Error: "), shown
    words = line.split()
    output = words[words.index("-o") + 1] if "-o" in words else None
    if output is not None and not output.startswith(HOSTILE):  # an input was refused
        assert "cannot be written" not in done.stderr, shown  # not blamed on the output


def test_a_refused_command_changes_no_file(ran: tuple[Ran, dict[str, str], dict[str, str]]) -> None:
    """Nothing already there (records, traces, caches, task sets) is lost or rewritten."""
    _, before, after = ran
    assert after == before


@pytest.mark.parametrize("line", READ_ONLY_READS)
def test_a_read_only_folder_is_read_as_any_other(
    ran: tuple[Ran, dict[str, str], dict[str, str]], line: str
) -> None:
    done = ran[0][line]
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr


def test_every_path_option_of_every_command_has_a_case() -> None:
    """Each path a command takes (its click.Path parameters, and the task sets named by
    text) is given an unreadable or unwritable value by at least one case."""
    wanted = {
        (name, param.name)
        for name, command in _commands(main, ())
        for param in command.params
        if isinstance(param.type, click.Path) or (name, param.name) in TEXT_PATHS
    }
    hostile = {(name, param) for _, line in CASES for name, param in _hostile_params(line)}
    assert wanted - hostile == set()
    leaves = {name for name, _ in _commands(main, ())}
    paths = {name for name, _ in wanted}
    # A command reading or writing no path: named here, so adding one is a decision.
    assert leaves - paths == {
        "cost growth",
        "cost patterns",
        "cost retry",
        "cost verifier",
        "patterns",
        "reference",  # writes results/reference/ where it runs: tests/harness/cli/test_reference.py
        "serve-local",
    }


def _commands(group: click.Command, prefix: tuple[str, ...]) -> Iterator[tuple[str, click.Command]]:
    if not isinstance(group, click.Group):
        yield " ".join(prefix), group
        return
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        yield from _commands(command, (*prefix, name))


def _hostile_params(line: str) -> Iterator[tuple[str, str]]:
    """(command, parameter) of each parameter ``line`` sets to a hostile path."""
    args = shlex.split(line)
    command: click.Command = main
    names: list[str] = []
    while isinstance(command, click.Group):
        found = command.get_command(click.Context(command), args[0])
        assert found is not None, line
        command, names, args = found, [*names, args.pop(0)], args
    with command.make_context(" ".join(names), args, resilient_parsing=True) as context:
        for param in command.params:
            value = context.params.get(param.name or "")
            values = value if isinstance(value, tuple) else (value,)  # a repeatable option's
            if any(v is not None and str(v).startswith(HOSTILE) for v in values):
                yield " ".join(names), param.name or ""


def test_serve_local_refuses_a_port_out_of_range_before_starting() -> None:
    for port in ("-1", "65536"):  # (0 would serve on a free port)
        result = CliRunner().invoke(main, ["serve-local", "--port", port])
        assert result.exit_code == 2, result.output
        assert "1<=x<=65535" in result.output
        assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (PermissionError(errno.EACCES, "Permission denied", "R/runs.jsonl"),
         "R/runs.jsonl: permission denied"),
        (NotADirectoryError(errno.ENOTDIR, "Not a directory", "afile/sub"),
         "afile/sub: not a directory (a part of the path is a file)"),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "/proc/nope"),
         "/proc/nope: no such file or folder"),
        (OSError(errno.EROFS, "Read-only file system", "ro/out.html"),
         "ro/out.html: read-only file system"),
        (OSError(errno.EBADF, "Bad file descriptor", b"raw\xff"), "raw\\xff: Bad file descriptor"),
    ],
)  # fmt: skip
def test_a_path_error_is_said_of_its_path(error: OSError, line: str) -> None:
    assert is_path_error(error)
    assert path_problem(error) == line


@pytest.mark.parametrize(
    "error",
    [
        BrokenPipeError(errno.EPIPE, "Broken pipe"),
        ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
        TimeoutError(errno.ETIMEDOUT, "Connection timed out"),
        OSError("no errno, no file"),
    ],
)
def test_an_error_that_is_not_about_a_path_is_left_alone(error: OSError) -> None:
    assert not is_path_error(error)
