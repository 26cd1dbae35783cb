"""The harness behind ``loopbench``: models, patterns, the runner, records and reports.

Internal: may change between releases. The public API is the ``loopbench`` package (the
names in ``loopbench.__all__``), the ``loopbench`` command and the records' format."""
