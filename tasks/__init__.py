"""Task sets as data (``taskset``, ``registry``), and the tools they offer."""
