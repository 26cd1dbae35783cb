"""docs/architecture.md's path from ``loopbench run`` to the table is the path a run
takes: the main line ``bench/run_walk.py`` traces, in the order it prints."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
SECTION = "## From `loopbench run` to the table"


def documented() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    return re.findall(r"^\d+\. `([^`]+)`:", section, re.MULTILINE)


def test_the_documented_path_is_the_traced_one():
    # In a process of its own: what earlier tests cached would shorten the path here. One
    # run at a time: the path is the same, and no machine's timing reorders it.
    run = ["--tasks", "depot", "--arm", "react_text", "--runs-in-flight", "1"]
    walked = subprocess.run(
        [sys.executable, "bench/run_walk.py", "--", *run],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    traced = re.findall(r"^\s*\d+\. (\S+)$", walked, re.MULTILINE)
    assert traced, walked
    assert documented() == traced, (
        "docs/architecture.md's path differs from the traced one: run "
        "`.venv/bin/python bench/run_walk.py` and write its main line in that section, in order"
    )
