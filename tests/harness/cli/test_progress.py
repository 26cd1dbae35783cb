"""The progress of a running grid: plain lines for logs, and the live view drawn by rich."""

import io
import re
import sys

from rich.console import Console

from loopbench.harness.cli.progress import Progress
from loopbench.harness.cli.progress_view import Tally
from loopbench.harness.results.records import RunRecord

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(
    arm="cot",
    status="answered",
    correct=None,
    turns=1,
    retries=0,
    cost=None,
    tokens=0,
    replayed=0,
    replayed_cost=None,
):
    return RunRecord(
        arm=arm,
        task_id="t1",
        repeat=0,
        status=status,
        correct=correct,
        turns=turns,
        retries=retries,
        cost_usd=cost,
        tokens_in=tokens,
        tokens_out=tokens // 2,
        cache_hits=replayed,
        cost_from_cache_usd=replayed_cost,
    )


def terminal():
    return Console(file=io.StringIO(), force_terminal=True, width=120)


def last_frame(console):
    """What the terminal shows at the end: the live view is redrawn after a carriage return."""
    return ANSI.sub("", console.file.getvalue()).rsplit("\r", 1)[-1]


def test_plain_lines_across_two_rounds(capsys):
    clock, console = Clock(), terminal()
    with Progress(True, rounds=True, console=console, clock=clock) as progress:
        progress.started(3, 1)
        for at, done in [
            (1, record("cot", correct=True, turns=2, cost=0.001)),
            (2, record("react", "api_error", turns=3, retries=2, cost=0.001)),
            (4, record("cot", correct=False, retries=1, cost=0.001)),
        ]:
            clock.now = at
            progress.recorded(done)
        progress.note("round 1: 2 arm(s) running")
        progress.started(2, 4)
        clock.now = 5
        progress.recorded(record("react", "pattern_error", turns=0, cost=0.001))
        clock.now = 8
        progress.recorded(record("react", "step_budget", turns=2, cost=0.001))
    assert capsys.readouterr().err.splitlines() == [
        "round 1: 3 runs to do, 1 already recorded",
        "  1/3 runs, 1 correct, 0 errors, 0 retries, 2 calls sent (2.0/s)",
        "  2/3 runs, 1 correct, 1 error, 2 retries, 5 calls sent (2.5/s)",
        "  3/3 runs, 1 correct, 1 error, 3 retries, 6 calls sent (1.5/s)",
        "round 1: 2 arm(s) running",
        "round 2: 2 runs to do, 4 already recorded",
        "  1/2 runs, 0 correct, 1 error, 0 retries, 0 calls sent (1.2/s)",
        "  2/2 runs, 0 correct, 1 error, 0 retries, 2 calls sent (1.0/s)",
        "done: 5 runs in 0:00:08, 1 correct of 3 graded, 2 errors, 3 retries, 8 calls sent "
        "(1.0/s), $0.0050 spent",
    ]
    assert console.file.getvalue() == ""  # no live view, whatever the console


def test_plain_mode_writes_a_line_per_tenth_the_last_run_and_no_escape_codes(capsys):
    with Progress(True, clock=Clock()) as progress:
        progress.started(21, 0)
        for _ in range(21):
            progress.recorded(record(correct=True))
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err
    steps = [line.split("/")[0].strip() for line in err.splitlines() if line.startswith("  ")]
    assert steps == [str(n) for n in (2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 21)]
    assert err.splitlines()[-1].startswith("done: 21 runs in 0:00:00, 21 correct of 21 graded")


def test_the_live_view_shows_each_arm_calls_per_second_and_eta():
    clock, console = Clock(), terminal()
    with Progress(False, console=console, clock=clock) as progress:
        progress.started(8, 0)
        clock.now = 4
        progress.recorded(record("cot", correct=True, turns=3, cost=0.001, tokens=1000))
        progress.recorded(record("cot", "api_error", turns=2, retries=3, cost=0.001))
        progress.recorded(record("cot", "step_budget", turns=3, cost=0.001))
        progress.recorded(record("react:guard=on", correct=True, turns=2, tokens=200))
    shown = last_frame(console)
    assert "4/8 runs · 0:00:04 elapsed · ETA 0:00:04" in shown
    rows = {line.split()[0]: line.split()[1:] for line in shown.splitlines() if line[:1] == " "}
    # accuracy leaves the api_error out: 1 correct of 2 graded; 1,500 tokens in and out
    assert rows["cot"] == ["3", "1/2", "50%", "1", "1,500", "$0.0030"]
    assert rows["react:guard=on"] == ["1", "1/1", "100%", "0", "300", "—"]
    assert "10 calls sent (2.5/s) · 1 error · 3 retries" in shown
    assert "spent" not in shown  # one arm has no price: no total pretends to be the cost


def test_the_live_view_keeps_arms_across_rounds_and_prints_notes_above_it():
    clock, console = Clock(), terminal()
    with Progress(False, rounds=True, console=console, clock=clock) as progress:
        progress.started(2, 0, by_arm={"cot": 1, "react": 1})
        clock.now = 2
        progress.recorded(record("cot", correct=True, cost=0.5))
        progress.recorded(record("react", correct=False, cost=0.5))
        progress.note("round 1: 1 arm(s) running; stopped: react (worse)")
        progress.started(1, 2, by_arm={"cot": 1})
    shown = last_frame(console)
    assert "round 2 · 0/1 runs · 2 in all · 0:00:02 elapsed · ETA 0:00:01" in shown
    rows = {line.split()[0]: line.split()[1:] for line in shown.splitlines() if line[:1] == " "}
    assert rows["cot"] == ["1/2", "1/1", "100%", "0", "0", "$0.5000"]
    assert rows["react"] == ["1/1", "0/1", "0%", "0", "0", "$0.5000"]
    assert "$1.0000 spent" in shown
    text = ANSI.sub("", console.file.getvalue())
    assert "round 1: 1 arm(s) running; stopped: react (worse)\n" in text
    assert "round 2: 1 runs to do, 2 already recorded\n" in text


def test_closing_stops_the_live_view():
    before = sys.stderr
    with Progress(False, console=terminal(), clock=Clock()) as progress:
        progress.started(1, 0)
        assert sys.stderr is not before  # rich shows other output above the view meanwhile
    assert sys.stderr is before


def test_accuracy_leaves_out_infrastructure_failures_and_cost_needs_every_price():
    tally = Tally()
    for done in [
        record(correct=True, cost=0.25),
        record("cot", "api_error", cost=0.25),
        record("cot", "pattern_error", cost=0.25),
        record("cot", "truncated", cost=0.25),
    ]:
        tally.add(done)
    assert (tally.accuracy(), tally.errors, tally.spent()) == ("1/2  50%", 2, "$1.0000")
    tally.add(record(correct=True))
    assert (tally.accuracy(), tally.spent()) == ("2/3  67%", "—")
    tally.add(record(correct=True, cost=0.25))
    assert tally.spent() == "—"


def replayed_run(calls, cost):
    """A run whose every call was replayed: its cost is what they would have cost."""
    return record(correct=True, turns=calls, cost=cost, replayed=calls, replayed_cost=cost)


def test_a_replayed_grid_says_nothing_was_sent_or_spent_and_what_replaying_saved(capsys):
    clock = Clock()
    with Progress(True, clock=clock) as progress:
        progress.started(2, 0)
        clock.now = 1
        progress.recorded(replayed_run(2, 0.0007))
        progress.recorded(replayed_run(2, 0.0007))
    assert capsys.readouterr().err.splitlines()[1:] == [
        "  1/2 runs, 1 correct, 0 errors, 0 retries, 0 calls sent (0.0/s), 2 replayed",
        "  2/2 runs, 2 correct, 0 errors, 0 retries, 0 calls sent (0.0/s), 4 replayed",
        "done: 2 runs in 0:00:01, 2 correct of 2 graded, 0 errors, 0 retries, 0 calls sent "
        "(0.0/s), $0.0000 spent; 4 calls replayed, not sent (would have cost $0.0014)",
    ]


def test_the_live_view_counts_sent_and_replayed_calls_and_their_costs_apart():
    clock, console = Clock(), terminal()
    with Progress(False, console=console, clock=clock) as progress:
        progress.started(2, 0)
        clock.now = 2
        progress.recorded(replayed_run(3, 0.003))
        # Two calls of four replayed: cost_usd counts all four, as first served.
        progress.recorded(
            record(correct=True, turns=4, cost=0.004, replayed=2, replayed_cost=0.002)
        )
    shown = last_frame(console)
    assert "2 calls sent (1.0/s) · 0 errors · 0 retries · $0.0020 spent · " in shown
    assert "5 calls replayed, not sent (would have cost $0.0050)" in shown
    row = next(line.split()[1:] for line in shown.splitlines() if line.startswith(" cot"))
    assert row[-1] == "$0.0020"  # an arm's cost is what it spent


def test_replayed_calls_without_a_price_say_no_cost():
    tally = Tally()
    tally.add(record(turns=2, replayed=2))
    assert (tally.sent, tally.spent()) == (0, "—")
    assert tally.replay() == "2 calls replayed, not sent"


TITLE = "\x1b]0;pwn\x07"


def test_the_live_view_shows_an_arm_named_with_escapes_and_never_draws_them():
    console = terminal()
    arm = f"direct:prompts=p{TITLE}\x1b[2J"
    with Progress(False, console=console, clock=Clock()) as progress:
        progress.started(2, 0, by_arm={arm: 2})
        progress.recorded(record(arm, correct=True))
        progress.note(f"round 1: stopped: {arm}")
    drawn = console.file.getvalue()
    assert "\x1b]0" not in drawn and "\x07" not in drawn and "\x1b[2J" not in drawn
    assert "direct:prompts=p\\x1b]0;pwn\\x07\\x1b[2J" in ANSI.sub("", drawn)


def test_what_is_printed_while_the_view_is_live_is_shown_not_acted_on():
    console = terminal()
    with Progress(False, console=console, clock=Clock()) as progress:
        progress.started(1, 0)
        print(f"warning: tasks{TITLE}.csv: read slowly", file=sys.stderr)
        print(f"out{TITLE}")
    drawn = console.file.getvalue()
    assert "\x07" not in drawn and "\x1b]0" not in drawn
    assert "warning: tasks\\x1b]0;pwn\\x07.csv: read slowly" in ANSI.sub("", drawn)
    assert "out\\x1b]0;pwn\\x07" in ANSI.sub("", drawn)


def test_plain_lines_show_escapes(capsys):
    with Progress(True, clock=Clock()) as progress:
        progress.started(1, 0)
        progress.note(f"round 1: stopped: a{TITLE}")
    assert "round 1: stopped: a\\x1b]0;pwn\\x07\n" in capsys.readouterr().err


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_view_draws_below_the_escaping_of_what_a_command_prints(monkeypatch):
    """The command escapes stdout and stderr; rich's own escape codes go below that, or the
    view would be drawn as text."""
    from loopbench.harness.streams import printing_printably

    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with printing_printably(), Progress(False, clock=Clock()) as progress:
        progress.started(1, 0)
        progress.recorded(record(f"a{TITLE}", correct=True))
    drawn = tty.getvalue()
    assert "\x1b[" in drawn and "\\x1b[" not in drawn  # rich's cursor moves, acted on
    assert "a\\x1b]0;pwn\\x07" in drawn and "\x07" not in drawn
