import re

NUMBER = r"(?:0|[1-9][0-9]*)"
IDENTIFIER = rf"(?:{NUMBER}|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
VERSION = re.compile(
    rf"({NUMBER})\.({NUMBER})\.({NUMBER})"
    rf"(?:-({IDENTIFIER}(?:\.{IDENTIFIER})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


def compare_versions(a: str, b: str) -> int:
    key_a, key_b = _key(a), _key(b)
    return (key_a > key_b) - (key_a < key_b)


def _key(version: str) -> tuple[int, int, int, int, list[tuple[int, int, str]]]:
    match = VERSION.fullmatch(version)
    if match is None:
        raise ValueError(f"not a semantic version: {version!r}")
    major, minor, patch, pre, _build = match.groups()
    if pre is None:
        return int(major), int(minor), int(patch), 1, []
    identifiers = [
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in pre.split(".")
    ]
    return int(major), int(minor), int(patch), 0, identifiers
