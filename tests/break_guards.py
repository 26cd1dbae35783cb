"""Break each guard once and see which tests notice (seed 001: a guard nobody has broken
is a guard nobody has tested). Each mutation is applied, its test file run, and the
source restored.

    .venv/bin/python tests/break_guards.py
"""

import subprocess
import sys
from pathlib import Path

MUTATIONS = [
    (
        "plan budget check",
        "harness/patterns/plan.py",
        "if opts.max_steps < 2:",
        "if False:",
        "tests/harness/patterns/test_plan.py",
    ),
    (
        "clone before append (tool loop)",
        "harness/patterns/tool_loop.py",
        "messages=tuple(messages),",
        "messages=messages,  # type: ignore[arg-type]",
        "tests/harness/patterns/test_react.py",
    ),
    (
        "clone before append (react_text)",
        "harness/patterns/react_text.py",
        "messages=(*EXAMPLE, *messages),",
        "messages=messages,  # type: ignore[arg-type]",
        "tests/harness/patterns/test_react_text.py",
    ),
    (
        "forward-reference refusal",
        "harness/patterns/rewoo.py",
        "            if n not in outputs:",
        "            if False:",
        "tests/harness/patterns/test_rewoo.py",
    ),
    (
        "budget reservation",
        "harness/patterns/reflection.py",
        "generation_steps = opts.max_steps - 2 * opts.cycles",
        "generation_steps = opts.max_steps",
        "tests/harness/patterns/test_reflection.py",
    ),
    (
        "token ceiling",
        "harness/patterns/limits.py",
        "if self._counted.tokens_used >= self._max_tokens:",
        "if False:",
        "tests/harness/patterns/test_limits.py",
    ),
    (
        "react_text step budget",
        "harness/patterns/react_text.py",
        "if opts.max_steps < 1:",
        "if False:",
        "tests/harness/patterns/test_react_text.py",
    ),
    (
        "truncation check",
        "harness/patterns/tool_loop.py",
        "if response.truncated:",
        "if False:",
        "tests/harness/patterns/test_react.py",
    ),
]


def main() -> None:
    for name, path, old, new, test in MUTATIONS:
        source = Path(path).read_text()
        assert old in source, (name, old)
        Path(path).write_text(source.replace(old, new, 1))
        try:
            run = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                capture_output=True,
                text=True,
            )
        finally:
            Path(path).write_text(source)
        failed = [
            line.split("::")[-1].split(" ")[0]
            for line in run.stdout.splitlines()
            if line.startswith("FAILED")
        ]
        print(f"{name}: {'caught by ' + ', '.join(failed) if failed else 'NOT CAUGHT'}")


if __name__ == "__main__":
    main()
