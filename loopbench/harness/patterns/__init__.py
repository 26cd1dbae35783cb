"""Reasoning patterns, one per module: ``registry`` registers them, ``catalog`` looks them up
(the shipped ones, which it imports, and installed plugins'), ``base`` holds what they share.
Imports nothing, so a pattern importing ``base`` does not import every other pattern
through this package."""
