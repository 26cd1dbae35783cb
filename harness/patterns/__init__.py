"""Reasoning patterns, one per module, behind a registry (``registry``); what they share
is in ``base``. Imports nothing, so a pattern importing ``base`` does not import the
registry and every other pattern through this package."""
