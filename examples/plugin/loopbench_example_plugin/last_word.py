"""last_word: a grader that reads an answer's last word, which the task set ``words``
names. Written against loopbench's public API only."""

from pydantic import Field

import loopbench


class WordTask(loopbench.TaskBase):
    expected: str = Field(min_length=1)
    """The word a right answer ends with."""


class LastWord(loopbench.Grader[WordTask]):
    async def grade(self, task: WordTask, answer: str) -> loopbench.Grade:
        said = (answer.split() or [""])[-1].strip(".!").casefold()
        return loopbench.Grade(said == task.expected.casefold(), f"the last word is {said!r}")


@loopbench.register_grader(
    "last_word",
    WordTask,
    "the answer's last word is the expected one",
    loopbench.GraderDetails(example='{"id": "w1", "question": "...", "expected": "desserts"}'),
)
def last_word(setup: loopbench.GraderSetup) -> LastWord:
    return LastWord()
