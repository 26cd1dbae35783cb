"""Importing this module registers every pattern that ships with loopbench."""

from harness.patterns import cot, direct, react, react_text

__all__ = ["cot", "direct", "react", "react_text"]
