"""The ``loopbench`` command: the group in ``loopbench.harness.cli.main``, one module per
subcommand.

Imports nothing, so importing one subcommand's module (``loopbench.harness.cli.errors``, say) does
not import every other through this package."""
