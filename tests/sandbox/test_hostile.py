"""Candidates that try to be graded passed without solving their task (issue 20): none is,
at any isolation level, this process survives, and nothing any of them started outlives its
run. The tests and every comparison run in the test runner, apart from the candidate, which
can reach only plain data on a pipe."""

import asyncio
import json
import os
import random
import re
import subprocess
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.graders.code_tests import describe
from loopbench.harness.cli.main import main
from loopbench.sandbox import run as sandbox_run
from loopbench.sandbox.leftovers import remove_tree
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.output import READ_BYTES
from loopbench.sandbox.plain_data import MESSAGE_VALUES
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import OUTPUT_SLACK, SuiteResult
from loopbench.tasks.humaneval import heldout_suite, load_problems, preamble
from loopbench.tasks.loading import load_taskset
from tests.sandbox.hostile import (
    CASES,
    ESCAPES,
    ROMAN_REFERENCE,
    UNHOOK,
    Hostile,
    always_equal,
    floods_output,
    floods_the_pipe,
    leaves_leftovers,
    prints_escapes,
    replaced_helpers,
)
from tests.sandbox.sandboxing import FAST, ONE_TEST, as_root, run

ROMAN = next(t for t in load_taskset("coding").tasks if t.id == "roman_numerals").suites
ROMAN_HELDOUT = Suite("heldout", ROMAN.heldout, ROMAN.entry_point)

#: What each hostile candidate ends as: its status, and words its report holds.
EXPECTED = {
    "replaced-helpers": ("failed", ""),
    "forged-events": ("crashed", "broke the protocol"),
    "always-equal": ("failed", "not plain data, so not compared"),
    "always-equal-str": ("failed", "not plain data, so not compared"),
    "patched-builtins": ("crashed", "broke the protocol"),
    "memory-past-the-hook": ("killed", "exceeded by the run's processes"),
    "reads-the-reference": ("crashed", "No such file or directory"),
    "reads-the-trusted-process": ("failed", ""),
    "huge-answer": ("failed", "over the 16777216 a message may hold"),
    "deep-answer": ("failed", "nested more than 100 deep"),
    "endless-recursion": ("failed", "raised RecursionError"),
    "exits-at-each-call": ("crashed", "exited with code 0 during test_standard_forms"),
    "floods-output": ("killed", "output limit (64000 bytes) exceeded, written past sys.stdout"),
    "floods-the-pipe": ("crashed", "a message of more than the 1000000 values allowed"),
    "prints-escapes": ("failed", "raised ValueError: \\x1b]0;pwned\\x07\\x1b[2J"),
}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_no_hostile_candidate_is_graded_passed(isolated, case: Hostile, started):
    if case.name == "reads-the-reference" and isolated.isolation == "none":
        pytest.skip("at the level none this machine's files are the candidate's to read")
    sandbox = Sandbox(Limits(), isolation=isolated.isolation)  # the default limits: 512 MB
    result = sandbox.run_sync(case.make(ROMAN.entry_point), ROMAN_HELDOUT)
    assert result.status != "passed", (case.why, result)
    if case.name in EXPECTED:
        status, says = EXPECTED[case.name]
        report = result.detail + (
            "" if result.first_failure is None else result.first_failure.actual
        )
        assert (result.status, says in report) == (status, True), result
    started.assert_all_ended()


def test_no_forgery_passes_a_single_humaneval_problem(sandbox):
    """HumanEval's own harness passes an object equal to everything on 155 of 164 problems,
    and the runner's helpers replaced pass 162 of them on a runner in the candidate's
    process (issue 20). Here: none."""
    problems = load_problems()

    async def grade_all():
        runs = [
            sandbox.run(
                make(p.entry_point), Suite("heldout", heldout_suite(p), p.entry_point, preamble(p))
            )
            for p in problems
            for make in (always_equal, replaced_helpers)
        ]
        return await asyncio.gather(*runs)

    results = asyncio.run(grade_all())
    assert [r.status for r in results if r.status == "passed"] == []
    refused = [r for r in results[::2] if "not plain data" in r.first_failure.actual]
    assert len(refused) > 150  # the rest iterate it (tuple(), 33 and 37) or test its identity


def test_a_test_that_catches_the_workers_end_still_fails(sandbox):
    """Once the candidate's process has ended, the run ends in that test, whatever the test
    does with the exception (a suite with a bare except cannot turn it into a pass)."""
    suite = (
        "def test_a(candidate):\n    try:\n        candidate()\n    except BaseException:\n"
        "        pass\n\n\ndef test_b(candidate):\n    try:\n        candidate()\n"
        "    except BaseException:\n        pass\n"
    )
    result = run(sandbox, "import os\ndef f():\n    os._exit(0)", suite)
    assert (result.status, result.passed) == ("crashed", 0)
    assert result.detail == "the candidate's process exited with code 0 during test_a"


def test_an_exception_named_like_a_built_in_is_not_that_built_in(sandbox):
    """A class of the candidate's own called ValueError does not satisfy raises(ValueError)."""
    suite = (
        "from loopbench_suite import raises\n\n\ndef test_it(candidate):\n"
        "    with raises(ValueError):\n        candidate()\n"
    )
    code = "class ValueError(Exception):\n    pass\n\ndef f():\n    raise ValueError('no')"
    result = run(sandbox, code, suite)
    assert result.status == "failed"
    assert result.first_failure.actual == "raised solution.ValueError: no"
    subclass = "class Bad(ValueError):\n    pass\n\ndef f():\n    raise Bad('yes')"
    assert run(sandbox, subclass, suite).status == "passed"


def test_an_object_is_compared_by_neither_equality_nor_truth(sandbox):
    """!=, ordering and truth are refused too, not only ==."""
    suite = (
        "def test_ne(candidate):\n    assert candidate() != 0\n\n\n"
        "def test_truth(candidate):\n    assert candidate()\n\n\n"
        "def test_order(candidate):\n    assert candidate() > -1\n\n\n"
        "def test_in_a_list(candidate):\n    assert [candidate()] == [1]\n"
    )
    code = "def f():\n    return object()"
    result = run(sandbox, code, suite)
    assert (result.status, result.passed, result.failed) == ("failed", 0, 4)
    assert "not plain data" in result.first_failure.actual


# A suite the model wrote (Reflexion's own tests) is not trusted: its runner is sandboxed like
# the code, and what it reports is checked to add up.


def forge(line: str) -> str:
    """A suite that writes ``line`` to every descriptor it holds, then exits."""
    return (
        f"import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, {line!r}.encode())\n"
        "    except OSError:\n        pass\nos._exit(0)\n\n\n" + ONE_TEST
    )


def test_a_forged_pass_does_not_add_up(sandbox):
    forged = forge('{"event": "end", "status": "passed", "detail": ""}\n')
    result = run(sandbox, "def f():\n    return 'no'\n", forged, name="self_tests")
    assert (result.status, result.passed, result.failed) == ("crashed", 0, 0)
    assert "do not add up" in result.detail


def test_every_field_read_back_is_capped(sandbox):
    event = {"event": "fail", "test": "t" * 5000, "actual": "x" * 100_000}
    lines = json.dumps(event) + '\n{"event": "start"}\n'  # and a start naming no test
    result = run(sandbox, "def f():\n    return 'ok'\n", forge(lines), name="self_tests")
    assert result.first_failure is not None
    assert len(result.first_failure.test) <= 1000
    assert len(result.first_failure.actual) <= 1000


def test_a_suite_the_model_wrote_runs_confined(sandbox):
    """Its runner gets the candidate's limits and audit hook, not this machine."""
    suite = "import socket\nsocket.socket()\n\n\n" + ONE_TEST
    result = run(sandbox, "def f():\n    return 'ok'\n", suite, name="self_tests")
    assert result.status == "crashed"
    assert "socket" in result.detail and "not allowed" in result.detail
    trusted = run(sandbox, "def f():\n    return 'ok'\n", suite)
    assert trusted.status == "passed"


def test_the_runner_is_not_in_the_candidates_reach(isolated):
    """The candidate looks for the test runner's process to write to or read: under bwrap and
    unshare it is in another pid namespace; at the level none it is in sight, but as root it
    is another uid's, and as the same user it is not dumpable: its descriptors stay shut."""
    code = UNHOOK + (
        "import os\ndef f():\n    found = []\n    for pid in os.listdir('/proc'):\n"
        "        try:\n            cmd = open(f'/proc/{pid}/cmdline', 'rb').read()\n"
        "        except OSError:\n            continue\n"
        "        if b'suite_runner' in cmd:\n            found.append(pid)\n"
        "            try:\n                os.listdir(f'/proc/{pid}/fd')\n"
        "                found.append('fds')\n            except OSError:\n                pass\n"
        "    return found\n"
    )
    result = run(isolated, code)
    seen = eval(result.first_failure.actual)
    if isolated.isolation != "none":
        assert seen == []
    else:
        assert seen and "fds" not in seen  # visible, but not to be read


def test_a_suite_the_model_wrote_runs_sandboxed(isolated):
    """Past its audit hook, a suite the model wrote sees no more of this machine than the code
    does: under bwrap and unshare, not this repository (where the references are)."""
    if isolated.isolation == "none":
        pytest.skip("at the level none this machine's files are visible to both")
    suite = UNHOOK + f"open({str(ROMAN_REFERENCE)!r}).read()\n\n\n" + ONE_TEST
    result = run(isolated, "def f():\n    return 'ok'\n", suite, name="self_tests")
    assert result.status == "crashed"
    assert "No such file or directory" in result.detail
    assert run(isolated, "def f():\n    return 'ok'\n", suite).status == "passed"


# The sandbox's own limits (issue 28): output, the pipe, what is shown, what is left behind.


def report_of(result: SuiteResult) -> str:
    """Every text a run's result holds (as stored, and as shown), and its grade's reason."""
    failure = result.first_failure
    texts = [result.detail, describe(result, "held-out")]
    texts += (
        [] if failure is None else [failure.test, failure.input, failure.expected, failure.actual]
    )
    return "\n".join(texts)


def test_output_past_the_cap_is_cut_and_marked_at_every_level(isolated):
    """60 MB printed past sys.stdout, then its descriptors truncated: the pipes it writes to
    are read no further than the cap (and a chunk), the run ends killed, and the result and
    the grade's reason say the output was cut."""
    result = isolated.run_sync(floods_output(ROMAN.entry_point), ROMAN_HELDOUT)
    assert (result.status, result.output_cut) == ("killed", True), result
    assert "output limit (64000 bytes) exceeded" in result.detail
    assert FAST.output_bytes < result.output_bytes <= FAST.output_bytes + OUTPUT_SLACK + READ_BYTES
    assert "output cut after" in describe(result, "held-out")
    assert result.to_json()["output_cut"] is True


def test_output_under_the_cap_is_counted_and_not_cut(isolated):
    code = "import os\ndef f():\n    os.write(1, b'x' * 1000)\n    print('y' * 99)\n    return 'ok'"
    result = run(isolated, code)
    assert (result.status, result.output_bytes, result.output_cut) == ("passed", 1100, False)


def test_output_stopped_at_sys_stdout_is_marked_cut_too(sandbox):
    result = run(sandbox, "def f():\n    print('x' * 100_000)\n    return 'ok'")
    assert (result.status, result.output_cut) == ("killed", True)
    assert result.output_bytes <= FAST.output_bytes


def test_a_reply_of_too_many_values_is_refused_before_the_runner_builds_it(isolated):
    """The worker patched to send 16 MiB of nested lists as each reply: the runner counts the
    values before it parses any, and ends the run as the candidate's protocol break."""
    result = isolated.run_sync(floods_the_pipe(ROMAN.entry_point), ROMAN_HELDOUT)
    assert result.status == "crashed"
    assert result.detail == (
        "the candidate's process broke the protocol: a message of more than the "
        f"{MESSAGE_VALUES} values allowed during test_standard_forms"
    )


def test_an_honest_reply_of_too_many_values_fails_its_test(sandbox):
    unhurried = Sandbox(Limits(timeout_s=60), isolation=sandbox.isolation)
    result = run(unhurried, "def f():\n    return [0] * 1_200_000")
    assert result.status == "failed"
    refused = f"returned a reply of more than the {MESSAGE_VALUES} values one message may hold"
    assert result.first_failure.actual == refused


def test_the_trusted_runner_holds_no_more_memory_than_the_box(sandbox):
    """Whatever a suite keeps of the candidate's replies, the trusted runner's address space
    is the box's: past it, the test fails with a MemoryError."""
    suite = "def test_it(candidate):\n    kept = bytearray(300 << 20)\n    assert kept\n"
    result = run(Sandbox(FAST, isolation=sandbox.isolation), "def f():\n    return 'ok'", suite)
    assert result.status == "failed"
    assert result.first_failure.actual == "raised MemoryError"


CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x0dpassed\\u202edessap"
CRASHES = "import os, sys\nsys.stderr.write('\\x1b[2J' + {!r} + '\\n')\nos._exit(3)\n\n\n"


@pytest.mark.parametrize(
    ("code", "suite_name", "suite", "shown"),
    [
        (prints_escapes("f"), "heldout", ONE_TEST, SHOWN),
        (f"raise RuntimeError({ESCAPES!r})\n" + prints_escapes("f"), "heldout", ONE_TEST, SHOWN),
        (
            "def f():\n    return 'ok'",
            "self_tests",
            CRASHES.format("\x9b31m") + ONE_TEST,
            "\\x1b[2J\\x9b31m",
        ),
    ],
    ids=["raised-in-a-test", "raised-as-it-loads", "a-suite-the-model-wrote-crashes"],
)
def test_escape_sequences_are_shown_not_acted_on(isolated, code, suite_name, suite, shown):
    """What a candidate raises, and the last words of a suite the model wrote as it crashes:
    each escape sequence and carriage return stored and shown as text (\\x1b), never raw."""
    result = run(isolated, code, suite, name=suite_name)
    report = report_of(result)
    assert CONTROL.findall(report) == []
    assert shown in report, report


def test_the_grade_command_prints_no_escape_sequence(tmp_path):
    reply = tmp_path / "reply.py"
    reply.write_text(prints_escapes("parse_roman"))
    args = ["grade", "--task", "coding/roman_numerals", "--code-file", str(reply)]
    for extra in ([], ["--format", "json"]):
        done = CliRunner().invoke(main, args + extra)
        assert done.exit_code == 0, done.output
        assert "pwned" in done.output
        assert CONTROL.findall(done.output) == []


def ipc_keys() -> set[int]:
    """The keys of this machine's System V IPC objects (its IPC namespace's)."""
    keys = set()
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        column = lines[0].split().index("key")
        keys |= {int(line.split()[column]) for line in lines[1:]}
    return keys


def test_nothing_a_run_leaves_outlives_it_at_any_level(isolated, monkeypatch):
    """Folders nested 3,000 deep in /tmp and the work directory, files in every shared
    folder, System V shared memory, a queue and a semaphore set: none outlives the run, at
    any level, and the next run on the same sandbox (the reference) passes (issue 28: the
    sweep failed with RecursionError, and so did every later run at the level none)."""
    if isolated.isolation == "none" and not as_root():
        pytest.skip("at the level none, as the same user, what the run leaves is this user's")
    token, key = f"loopbench-test-{uuid.uuid4().hex}", random.randrange(1 << 20, 1 << 30)
    removed: list[Path] = []

    def recording_remove(path):
        removed.append(Path(path))
        remove_tree(path)

    monkeypatch.setattr(sandbox_run, "remove_tree", recording_remove)
    shared = [Path(folder, f"{token}-file") for folder in ("/tmp", "/var/tmp", "/dev/shm")]
    shared += [Path("/run/lock", f"{token}-file"), Path("/tmp", token)]
    try:
        result = run(isolated, leaves_leftovers(token, key), ROMAN.heldout, entry="parse_roman")
        assert result.status == "failed", result
        assert [path for path in shared if os.path.lexists(path)] == []
        assert key not in ipc_keys()
        assert removed and [path for path in removed if path.exists()] == []
        again = run(isolated, ROMAN_REFERENCE.read_text(), ROMAN.heldout, entry="parse_roman")
        assert again.status == "passed", again
    finally:
        for path in shared:
            remove_tree(path)
        hex_key = hex(key)
        subprocess.run(["ipcrm", "-M", hex_key, "-Q", hex_key, "-S", hex_key], capture_output=True)
