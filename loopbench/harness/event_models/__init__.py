"""The trace event models, by who emits them: the shared base and the counting client's
(``base``), the runner's and the tool loops' (``run``), the patterns' own (``patterns``).
Import them from ``loopbench.harness.events``, which holds their union. Imports nothing."""
