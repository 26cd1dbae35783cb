"""The time a prompt slot's load-time check and render take on the largest texts a prompt
file may hold (issue 37: a 50-byte loop took 51 s and 3.1 GB before slots only filled in
their variables): each case checked once, and rendered when the check lets it, with a
1 MiB question where it says so; then the process's peak memory.

    .venv/bin/python bench/slot_templates.py
"""

from __future__ import annotations

import resource
import time

from loopbench.harness.slot_templates import (
    MAX_TAG_TOKENS,
    SlotTooLarge,
    render,
    template_problem,
)

VARIABLES = ("question", "steps")
MIB = 2**20
CASES = {
    "1 MiB of plain text": ("x" * (MIB - 1), "q"),
    "1 MiB of {{ question }}": ("{{ question }}" * (MIB // 14), "q"),
    "the most substitutions, 1 MiB question": (
        "{{ question }}" * (MAX_TAG_TOKENS // 3),
        "q" * MIB,
    ),
    "the most substitutions in 900 kB of text": (
        "{{ question }}" * (MAX_TAG_TOKENS // 3) + "x" * 900_000,
        "q" * 100,
    ),
    "100,000 nested parentheses": ("{{ " + "(" * 100_000 + "question" + ")" * 100_000 + " }}", "q"),
    "a chain of 100,000 filters": ("{{ question" + "|upper" * 100_000 + " }}", "q"),
    "a replace that would make 2 MB": (
        "{{ question|replace('', '" + "y" * 1000 + "') }}",
        "q" * 2000,
    ),
}


def main() -> None:
    for name, (text, question) in CASES.items():
        began = time.perf_counter()
        problem = template_problem(text, VARIABLES)
        checked = time.perf_counter() - began
        outcome = f"refused: {problem[:60]}" if problem else "accepted"
        if problem is None:
            began = time.perf_counter()
            try:
                size = len(render(text, {"question": question, "steps": ""}))
                outcome += f", rendered {size} characters"
            except SlotTooLarge as exc:
                outcome += f", render refused: {str(exc)[:50]}"
            outcome += f" in {time.perf_counter() - began:.2f} s"
        print(f"{name}: checked in {checked:.2f} s; {outcome}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak memory: {peak} MiB")


if __name__ == "__main__":
    main()
