"""The ``loopbench`` command: the group in ``harness.cli.main``, one module per subcommand.

Imports nothing, so importing one subcommand's module (``harness.cli.errors``, say) does not
import every other through this package."""
