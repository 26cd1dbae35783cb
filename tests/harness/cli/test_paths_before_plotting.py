"""``report`` and ``plot`` check their paths before they import matplotlib, which may
print a line of its own on first use (that it is building its font cache): a path they
cannot use is refused in one line whatever matplotlib would have said."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
FOLDER = ROOT / "results" / "reference" / "local-smollm2"

#: Runs the command as ``python -m loopbench.harness.cli`` does, then says whether it imported
#: matplotlib (at exit, which a refusal reaches too).
RUN_AND_SAY = """
import atexit, runpy, sys
atexit.register(lambda: print("MATPLOTLIB", "matplotlib" in sys.modules, file=sys.stderr))
runpy.run_module("loopbench.harness.cli", run_name="__main__", alter_sys=True)
"""


def loopbench(*args: str, cwd: Path, timeout: float = 300) -> tuple[int, list[str], bool]:
    """The exit code, the lines on stderr, and whether matplotlib was imported."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_SAY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    *lines, said = done.stderr.splitlines()
    return done.returncode, lines, said == "MATPLOTLIB True"


COMMANDS = {
    "report": ["report"],
    "plot": ["plot", "--kind", "status"],
}


@pytest.fixture
def place(tmp_path: Path) -> Path:
    (tmp_path / "afile").write_text("a file, not a folder\n")
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_that_cannot_be_written_is_refused_before_anything_is_read_or_drawn(
    place: Path, command: str
) -> None:
    code, lines, plotted = loopbench(*COMMANDS[command], str(FOLDER), "-o", "afile/out", cwd=place)
    assert code == 2 and len(lines) == 1 and "afile/out" in lines[0], lines
    assert "cannot be written" in lines[0]
    assert not plotted


@pytest.mark.parametrize("command", COMMANDS)
def test_a_results_folder_that_cannot_be_read_is_refused_before_matplotlib_and_leaves_no_file(
    place: Path, command: str
) -> None:
    code, lines, plotted = loopbench(*COMMANDS[command], "no-such-folder", "-o", "out", cwd=place)
    assert code == 2 and len(lines) == 1 and "no-such-folder" in lines[0], lines
    assert not plotted
    assert sorted(p.name for p in place.iterdir()) == ["afile"]  # the output was not made


@pytest.mark.parametrize("command", COMMANDS)
def test_a_refused_command_leaves_the_file_already_at_its_output_as_it_was(
    place: Path, command: str
) -> None:
    suffix = ".html" if command == "report" else ".png"
    kept = place / f"kept{suffix}"
    kept.write_text("written before\n")
    code, lines, _ = loopbench(*COMMANDS[command], "no-such-folder", "-o", kept.name, cwd=place)
    assert code == 2, lines
    assert kept.read_text() == "written before\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_fifo_that_nobody_reads_is_refused_not_waited_on(
    place: Path, command: str
) -> None:
    os.mkfifo(place / "fifo.out")
    # Opened to be written, a FIFO without a reader would block for ever: the timeout
    # only tells such a wait from an answer, however slow the machine.
    code, lines, plotted = loopbench(
        *COMMANDS[command], str(FOLDER), "-o", "fifo.out", cwd=place, timeout=120
    )
    assert code == 2 and len(lines) == 1 and "fifo.out: cannot be written" in lines[0], lines
    assert not plotted


@pytest.mark.parametrize("command", COMMANDS)
def test_a_usable_folder_and_output_are_drawn(place: Path, command: str) -> None:
    code, lines, plotted = loopbench(*COMMANDS[command], str(FOLDER), "-o", "out", cwd=place)
    assert code == 0, lines
    assert plotted  # what the refusals above did not import, drawing does
    written = place / ("out.html" if command == "report" else "out.png")
    assert written.stat().st_size > 1000
