"""Work done in a forked child (``loopbench.harness.report.aside``): what it returns,
raises and says on stderr is as if it were done here."""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
import threading
import time

import pytest

from loopbench.harness.errors import BadInput
from loopbench.harness.report import aside as _aside
from loopbench.harness.report.aside import Aside, in_halves


@pytest.fixture
def alone() -> None:
    """The work forks only while no other thread runs: one left behind by an earlier test
    (a listener never joined) is named here rather than read as a fork not made."""
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    assert not others, f"threads left running by earlier tests: {others}"


def _pid_and_said() -> tuple[int, list[int]]:
    print("said by the work", file=sys.stderr)
    return os.getpid(), list(range(5))


def test_the_result_is_made_in_a_child_and_what_it_said_is_written_here(
    alone: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    aside = Aside(_pid_and_said)
    assert aside.forked
    assert capsys.readouterr().err == ""  # held until the result is taken
    pid, values = aside.result()
    assert pid != os.getpid()
    assert values == [0, 1, 2, 3, 4]
    assert capsys.readouterr().err == "said by the work\n"


def _refuses() -> None:
    raise BadInput("no runs")


def test_what_the_work_raises_is_raised_here() -> None:
    with pytest.raises(BadInput, match="no runs"):
        Aside(_refuses).result()


class _Unpicklable(Exception):
    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()  # a lock does not pickle


def _raises_unpicklable() -> None:
    raise _Unpicklable


def test_an_exception_that_cannot_be_sent_is_raised_by_doing_the_work_here() -> None:
    with pytest.raises(_Unpicklable):
        Aside(_raises_unpicklable).result()


def test_without_fork_the_work_is_done_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork(method: str) -> None:
        raise ValueError(f"cannot find context for {method!r}")

    monkeypatch.setattr(_aside.multiprocessing, "get_context", no_fork)
    pid, _ = Aside(_pid_and_said).result()
    assert pid == os.getpid()


def _slow_in_a_child(parent: int) -> int:
    if os.getpid() != parent:
        time.sleep(60)  # killed meanwhile
    return os.getpid()


def test_with_another_thread_running_the_work_is_done_here() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        aside = Aside(_pid_and_said)
        pid, _ = aside.result()
    finally:
        stop.set()
        other.join()
    assert not aside.forked
    assert pid == os.getpid()


def test_a_child_that_dies_leaves_the_work_to_be_done_here(alone: None) -> None:
    aside = Aside(functools.partial(_slow_in_a_child, os.getpid()))
    child = aside.child
    assert isinstance(child, multiprocessing.process.BaseProcess)
    assert child.pid is not None
    os.kill(child.pid, 9)
    assert aside.result() == os.getpid()


def _pid_of(item: int) -> tuple[int, int]:
    return item * 2, os.getpid()


def test_in_halves_gives_the_list_in_order_the_second_half_made_in_a_child(alone: None) -> None:
    made = in_halves(_pid_of, list(range(5)))
    assert [value for value, _ in made] == [0, 2, 4, 6, 8]
    pids = [pid for _, pid in made]
    assert pids[:3] == [os.getpid()] * 3
    assert pids[3] == pids[4] != os.getpid()
    assert in_halves(_pid_of, [1]) == [(2, os.getpid())]  # one item: no child
    assert in_halves(_pid_of, [1, 2], fork=False) == [(2, os.getpid()), (4, os.getpid())]


def _refuses_item(item: int) -> int:
    if item in (1, 3):
        raise BadInput(f"item {item}")
    return item


def test_in_halves_raises_the_first_error_in_the_items_order() -> None:
    with pytest.raises(BadInput, match="item 1"):
        in_halves(_refuses_item, [0, 1, 2, 3])
    with pytest.raises(BadInput, match="item 3"):
        in_halves(_refuses_item, [0, 2, 4, 3])
