"""Graders: pure functions from an answer and its expectation to a verdict with a reason."""

from graders.exact import Grade, grade, normalise, numbers_in
from graders.selftest import CASES, run_self_test

__all__ = ["CASES", "Grade", "grade", "normalise", "numbers_in", "run_self_test"]
