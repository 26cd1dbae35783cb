"""The README's Python example runs as written, and prints what it says it does."""

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_the_python_api_example_runs(tmp_path):
    section = README.read_text().split("## From Python")[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    ran = subprocess.run(
        [sys.executable, "-c", code.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(README.parent)},
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("48 runs; {'cot': 0.5, 'direct': 0.5}")
    assert (tmp_path / "results" / "api-example" / "runs.jsonl").is_file()
