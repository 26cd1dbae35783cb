"""An example loopbench plugin: the pattern ``ask_twice``, the tool ``reverse``, the grader
``last_word``, and the task sets ``capitals`` and ``words``."""

from pathlib import Path

CAPITALS = Path(__file__).parent / "capitals"
WORDS = Path(__file__).parent / "words"
