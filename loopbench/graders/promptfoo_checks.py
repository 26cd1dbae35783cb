"""promptfoo's deterministic asserts, each as promptfoo 0.123 checks it on the output (the
model's whole reply as it came, never stripped), read from its src/assertions/*.ts:

- ``equals``: the value's text (JavaScript's ``String(value)``: ``3.0`` is ``"3"``) is the
  output exactly; a JSON value (an object, a list, ``null``) equals ``JSON.parse(output)``
  strictly (``true`` is not ``1``).
- ``contains``, ``icontains`` (both lowercased), ``starts-with``: a substring, a prefix.
- ``contains-any``, ``contains-all``, ``icontains-any``, ``icontains-all``: a list, or a
  text read as promptfoo reads it (comma separated, a quoted field may hold commas).
- ``regex``: ``new RegExp(value).test(output)`` (loopbench/graders/js_regex.py).
- ``is-json``: ``JSON.parse(output)`` succeeds (JSON's whitespace around it is fine, ``NaN``
  is not JSON); a schema given, the parsed value meets it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from loopbench.graders import js_regex


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` of a scalar read from YAML or JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return _js_number(value)
    return str(value)


def _js_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if 1e-6 <= abs(value) < 1e21:
        return format(Decimal(repr(value)), "f")
    mantissa, _, exponent = repr(value).partition("e")
    return f"{mantissa}e{'+' if int(exponent) > 0 else '-'}{abs(int(exponent))}"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_json(text: str) -> Any:
    """``JSON.parse(text)``; ``ValueError`` where it throws (Python's ``json`` also takes
    ``NaN`` and ``Infinity``, which JSON is not)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError("nested too deep") from None


def strictly_equal(a: Any, b: Any) -> bool:
    """Node's ``util.isDeepStrictEqual`` of two JSON values: ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(strictly_equal, a, b))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def listed(value: Any) -> list[str]:
    """A ``contains-any``-like value's items: its list, or its text split at commas as
    promptfoo's ``parseCommaSeparatedValues`` splits it."""
    if isinstance(value, list):
        return [js_string(item) for item in value]
    text, items, at = str(value), [], 0
    while at < len(text):
        while at < len(text) and text[at] in " \t\n\r,":
            at += 1
        if at >= len(text):
            break
        if text[at] == '"':
            field, at = _quoted(text, at)
            while at < len(text) and text[at] in " \t\n\r":
                at += 1
        else:
            end = text.find(",", at)
            end = len(text) if end == -1 else end
            field, at = text[at:end].strip(), end
        items.append(field)
    return items


def _quoted(text: str, at: int) -> tuple[str, int]:
    """A quoted field from ``at`` (its opening quote): its text, a doubled quote read as
    one, and where it ends."""
    out, at = [], at + 1
    while at < len(text):
        if text[at] == '"':
            if text[at + 1 : at + 2] == '"':
                out.append('"')
                at += 2
                continue
            return "".join(out), at + 1
        out.append(text[at])
        at += 1
    return "".join(out), at


def _equals(output: str, value: Any) -> bool:
    if isinstance(value, dict | list) or value is None:
        try:
            return strictly_equal(value, js_json(output))
        except ValueError:
            return False
    return js_string(value) == output


def _is_json(output: str, value: Any) -> bool:
    try:
        parsed = js_json(output)
    except ValueError:
        return False
    if value is None:
        return True
    from loopbench.graders import json_schemas  # jsonschema, imported only where a schema is

    return json_schemas.problem(value, parsed) is None


CHECKS: dict[str, Callable[[str, Any], bool]] = {
    "equals": _equals,
    "contains": lambda output, value: js_string(value) in output,
    "icontains": lambda output, value: js_string(value).lower() in output.lower(),
    "contains-any": lambda output, value: any(v in output for v in listed(value)),
    "contains-all": lambda output, value: all(v in output for v in listed(value)),
    "icontains-any": lambda output, value: any(v.lower() in output.lower() for v in listed(value)),
    "icontains-all": lambda output, value: all(v.lower() in output.lower() for v in listed(value)),
    "starts-with": lambda output, value: output.startswith(value),
    "regex": lambda output, value: js_regex.search(value, output),
    "is-json": _is_json,
}
