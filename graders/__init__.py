"""Graders: pure functions from an answer and its expectation to a verdict with a reason
(``exact``), and code run against a suite in the sandbox (``code_tests``, ``sandbox``).

Internal: may change between releases. The public API is the ``loopbench`` package."""
