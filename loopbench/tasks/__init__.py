"""Task sets as data (``taskset``, ``registry``), and the tools they offer.

Internal: may change between releases. The public API is the ``loopbench`` package."""
