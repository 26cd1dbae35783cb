"""How the graders' verdicts agree with a careful reader's, on the labelled corpus of replies
(loopbench/graders/corpus/replies.jsonl) and on the restyled answers
(loopbench/graders/corpus/restyled.jsonl).

    .venv/bin/python bench/reading_agreement.py
    .venv/bin/python bench/reading_agreement.py --corpus held_out.jsonl --restyled other.jsonl

Prints agreement per grader and per style, every false pass and false fail (the reply, the
careful verdict and why, the grade's reason), and the share of restyled answers graded
alike (every restyling the same verdict) with each answer's share of replies graded as
the careful reader grades them. Files of the same format may be given for either set.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))

from loopbench.graders.corpus_check import (
    REPLIES,
    RESTYLED,
    Checked,
    CheckedAnswer,
    Tally,
    agreement_lines,
    check,
    check_restyled,
    load_replies,
    load_restyled,
    tally,
)


def tally_table(tallies: dict[str, Tally], by: str) -> str:
    rows = [
        (name, t.total, t.agree, f"{t.agree / t.total:.0%}", t.false_passes, t.false_fails)
        for name, t in sorted(tallies.items())
    ]
    return tabulate(rows, headers=[by, "replies", "agree", "share", "false pass", "false fail"])


def short(text: str, width: int = 90) -> str:
    one_line = text.replace("\n", "\\n")
    return one_line if len(one_line) <= width else one_line[: width - 3] + "..."


def disagreements(checked: list[Checked], false_pass: bool) -> list[str]:
    return [
        f"  {one.reply.grader:7} {one.reply.style:16} «{short(one.reply.case.answer)}»\n"
        f"          careful: {'correct' if one.reply.case.correct else 'wrong'} "
        f"({one.reply.case.why}); grade: {short(one.result.grade.reason, 110)}"
        for one in checked
        if not one.agrees and one.false_pass == false_pass
    ]


def restyled_rows(answers: list[CheckedAnswer]) -> str:
    rows = []
    for answer in answers:
        agree = sum(one.agrees for one in answer.checked)
        rows.append(
            (
                answer.answer.id,
                answer.checked[0].reply.grader,
                "correct" if answer.checked[0].reply.case.correct else "wrong",
                f"{agree}/{len(answer.checked)}",
                "yes" if answer.alike else "no",
            )
        )
    return tabulate(rows, headers=["answer", "grader", "careful", "graded as careful", "alike"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPLIES, help="replies.jsonl's format")
    parser.add_argument("--restyled", type=Path, default=RESTYLED, help="restyled.jsonl's format")
    args = parser.parse_args()
    checked = check(load_replies(args.corpus))
    answers = check_restyled(load_restyled(args.restyled))
    print(f"Corpus: {args.corpus} ({len(checked)} replies)\n")
    print(tally_table(tally(checked, "grader"), "grader"), end="\n\n")
    print(tally_table(tally(checked, "style"), "style"), end="\n\n")
    for false_pass, title in ((True, "False passes"), (False, "False fails")):
        listed = disagreements(checked, false_pass)
        print(f"{title} ({len(listed)}):", *listed, sep="\n", end="\n\n")
    print(f"Restyled: {args.restyled} ({len(answers)} answers)\n")
    print(restyled_rows(answers), end="\n\n")
    print(*agreement_lines(checked, answers), sep="\n")


if __name__ == "__main__":
    main()
