"""Graders: pure functions from an answer and its expectation to a verdict with a reason
(``exact``), and code run against a suite in the sandbox (``code_tests``; the sandbox is a
package of its own, ``sandbox``); the task models they read (``task_models``,
``answer_keys``), the shipped graders (``builtin``) and the registry of graders by name,
open to plugins (``registry``).

Internal: may change between releases. The public API is the ``loopbench`` package."""
