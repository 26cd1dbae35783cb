"""The exact grader's strict rule: seed 003's typed check on the final answer
(loopbench/graders/reading.py: a self-correction's when it gives one), which a hedge cannot pass.

That answer must state exactly the expected numbers and name every expected entity, as
seed 003's rule says (loopbench/graders/exact.py), and besides, read as
loopbench/graders/mentions.py marks mentions:

- it commits to none of the task's ``distractors`` ("hedged: names 'Gdansk'"): the other
  candidates a hedge would list ("Rotterdam, Gdansk, Porto or Leeds"); a distractor it
  negates or compares with ("Rotterdam, not Gdansk"; "more than Leeds") is no hedge;
- it offers no expected entity as one of alternatives ("Rotterdam or Antwerp");
- it names every expected entity other than negated ("Neither Antwerp nor Rotterdam" and
  "Rotterdam is wrong" are wrong).
"""

from __future__ import annotations

from loopbench.graders.answer_keys import Expected
from loopbench.graders.exact import Grade, grade
from loopbench.graders.mentions import marked
from loopbench.graders.naming import found_in
from loopbench.graders.reading import Said, final, plain, revision_of, says_nothing, sentences_of
from loopbench.graders.stated_numbers import numbers_of, stated_number
from loopbench.graders.tokens import tokens


def strict_grade(answer: str | None, expected: Expected) -> Grade:
    """The strict rule's verdict on ``answer`` (see the module's rules)."""
    said = _answer(plain(answer or ""))
    if said.value is None:
        return Grade(False, said.why)
    sentence = said.value
    toks = tokens(sentence)
    mentions = marked(
        toks, found_in(toks, [[n] for n in [*expected.distractors, *expected.entities]])
    )
    names = [*expected.distractors, *expected.entities]
    committed = {m.key for m in mentions if m.committed}
    if hedge := [
        names[k] for k in committed if isinstance(k, int) and k < len(expected.distractors)
    ]:
        return Grade(False, f"hedged: names {', '.join(map(repr, hedge))}")
    offered = {m.key for m in mentions if m.committed and m.offered}
    if hedge := [names[k] for k in offered if isinstance(k, int)]:
        return Grade(False, f"hedged: offers {', '.join(map(repr, hedge))} or another")
    distractors = len(expected.distractors)
    negated = [
        e
        for i, e in enumerate(expected.entities, distractors)
        if i not in committed and any(m.key == i for m in mentions)
    ]
    if negated:
        return Grade(False, f"names {', '.join(map(repr, negated))} only negated")
    # guard: exact-amount-left-open-hedge
    if expected.numbers and "or more" in (number := stated_number(sentence)).why:
        return Grade(False, number.why)
    return grade(_affirmed(sentence), expected.numbers, expected.entities, expected.tolerance)


def _affirmed(text: str) -> str:
    """``text`` without the numbers it negates ("not 74 but 84" states 84). The numbers
    left are counted by seed 003's rule (loopbench/graders/exact.py): working left in the answer
    counts, as the chapter's cases have it."""
    toks = tokens(text)
    found, _ = numbers_of(toks)
    negated = [m for m in marked(toks, found, numbers=True) if m.negated]
    for m in reversed(negated):
        text = text[: toks[m.start].start] + text[toks[m.end - 1].end :]
    return text


def _answer(reply: str) -> Said[str]:
    """The final answer's text whole (its sentences, questions dropped): a correction's when
    it names or states something, none when it withdraws the answer, a hedge when another
    is offered after it."""
    answer = final(reply)
    text = " ".join(sentences_of(answer.text))
    if answer.revision is not None:
        revised = " ".join(sentences_of(revision_of(answer.revision).text))
        # guard: exact-another-answer-offered-after
        if answer.offers and _states(revised):
            return Said(None, "hedged: offers another answer after it")
        if _states(revised):
            return Said(revised)
        if answer.retracts:
            return Said(None, "retracted: corrected with no answer after it")
    return Said(text) if text.strip() else Said(None, "no answer")


def _states(text: str) -> bool:
    return not says_nothing(text)  # a number or a word that states something
