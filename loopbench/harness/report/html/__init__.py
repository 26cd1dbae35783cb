"""``loopbench report``'s HTML page: ``render`` writes it from what the private modules
(``_page`` and the modules it uses) gather. Imports nothing, so the private modules
importing one another do not import the page through this package."""
