"""JSON and YAML read as data, and only as data: what a task file holds is refused when it
would be misread (a key given twice, where the last value would silently win; ``NaN`` or
``Infinity``, which no answer is) or when reading it would not end in bounded time and
memory (nesting past ``MAX_DEPTH`` levels; YAML aliases standing for more than
``MAX_ALIASED`` values, as in a "billion laughs" file; an alias inside its own anchor).

Each refusal is a ``StructureError`` saying what is wrong in words, with the line where one
is known, for the reader to name its file. Text holding a lone surrogate (a ``"\\ud800"``
escape, which no UTF-8 text can hold) is found by ``has_surrogate`` and made valid by
``without_surrogates``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.error import MarkedYAMLError
from yaml.events import AliasEvent, Event
from yaml.nodes import MappingNode, Node
from yaml.resolver import Resolver

from loopbench.harness.errors import BadInput, HarnessFault

#: The deepest nesting of lists and objects read: far deeper than any task holds, and
#: shallow enough that nothing reading the value runs out of stack.
MAX_DEPTH = 100
#: How many values YAML aliases may stand for in one file, in all: generous for anchors
#: shared by many tests, and refusing a file whose aliases multiply (billion laughs).
MAX_ALIASED = 100_000

_SURROGATE = re.compile("[\ud800-\udfff]")
_MERGE = "tag:yaml.org,2002:merge"


class StructureError(BadInput):
    """Why a JSON or YAML text is not read; ``line`` (from 1) where one is known."""

    def __init__(
        self,
        why: str,
        line: int | None = None,
        invalid: bool = False,
        number: bool = False,
        field: str = "",
    ) -> None:
        self.why = f"field {field!r}: {why}" if field else why
        super().__init__(self.why)
        self.line, self.field = line, field
        self.invalid = invalid
        """Not JSON Python reads at all (rather than JSON refused): text that is not JSON,
        a number of over 4300 digits."""
        self.number = number
        """A number refused: NaN or an infinity."""


def load_json(text: str) -> Any:
    """The JSON value ``text`` holds; ``StructureError`` for text that is not JSON, a key
    given twice in an object, ``NaN``/``Infinity``, nesting past ``MAX_DEPTH``, or a number
    of over 4300 digits."""
    try:
        # guard: json-nan-infinity-refused
        value = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_float=_finite,
        )
    except StructureError as exc:
        if exc.field or not exc.number:
            raise
        raise StructureError(exc.why, exc.line, field=_non_finite_field(text)) from None
    except json.JSONDecodeError as exc:
        raise StructureError(f"not valid JSON ({exc.msg})", exc.lineno, invalid=True) from None
    except RecursionError:
        raise StructureError(_too_deep()) from None
    except ValueError:  # int(): a number of over 4300 digits
        raise StructureError("a number of over 4300 digits", invalid=True) from None
    # guard: json-nesting-bounded
    check_depth(value)
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    # guard: json-key-given-twice-refused
    if len(value) < len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise StructureError(f"key {twice!r} given twice in one object; give each key once")
    return value


def _no_constant(name: str) -> Any:
    raise StructureError(f"{name} is not a number a task holds; give a finite number", number=True)


def _finite(text: str) -> float:
    number = float(text)
    # guard: json-number-too-large-for
    if not math.isfinite(number):
        raise StructureError(
            f"{text} is too large a number to read; give a finite number", number=True
        )
    return number


def _non_finite_field(text: str) -> str:
    """The dotted path to the first NaN or infinity in the JSON ``text`` (read again, as
    Python reads it), or "" when it is not found."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path or "(whole value)"
        if isinstance(item, dict | list):
            children = item.items() if isinstance(item, dict) else enumerate(item)
            pairs = [(child, f"{path}.{key}" if path else str(key)) for key, child in children]
            stack.extend(reversed(pairs))
    return ""


def _too_deep() -> str:
    return f"lists and objects nested more than {MAX_DEPTH} levels deep"


def check_depth(value: Any) -> None:
    """``StructureError`` when lists and objects in ``value`` nest past ``MAX_DEPTH``."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > MAX_DEPTH:
                raise StructureError(_too_deep())
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def non_finite(value: Any) -> float | None:
    """A NaN or infinite number anywhere in ``value`` (lists and objects looked into)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character."""
    return _SURROGATE.sub("\ufffd", text)


def without_surrogates_in(value: Any) -> Any:
    """``value`` with each lone surrogate in its texts (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, list):
        return [without_surrogates_in(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates_in(v) for k, v in value.items()}
    return value


def load_yaml(text: str) -> Any:
    """The YAML document ``text`` holds, read safely (no tags that build objects);
    ``StructureError`` naming the line for text that is not YAML, a key given twice in a
    mapping, nesting past ``MAX_DEPTH``, aliases standing for more than ``MAX_ALIASED``
    values, or an alias inside its own anchor."""
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        why = getattr(exc, "problem", None) or " ".join(str(exc).split())
        said = why if isinstance(exc, _Refused) else f"not YAML ({why})"
        raise StructureError(said, mark.line + 1 if mark else None) from None
    except RecursionError:  # not reached within MAX_DEPTH; kept as a last line
        raise StructureError(_too_deep()) from None
    finally:
        loader.dispose()


class _Refused(HarnessFault, MarkedYAMLError):
    """A YAML text refused here (not a syntax error): ``problem`` says why."""

    def __init__(self, why: str, mark: Any) -> None:
        super().__init__(problem=why, problem_mark=mark)


class _BoundedComposer(Composer):
    """Composes nodes as PyYAML does, counting as it goes: the nesting, and how many values
    the aliases met so far stand for (an alias of a list of ten lists of ten stands for 111)."""

    def bound(self) -> None:
        self._depth = 0
        self._aliased = 0
        self._open: list[int] = []  # the values below each node being composed, so far
        self._sizes: dict[int, int] = {}  # an anchored node (by id): the values it holds

    peek_event: Callable[[], Event]
    check_event: Callable[..., bool]

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        if self.check_event(AliasEvent):
            node = super().compose_node(parent, index)
            size = self._sizes.get(id(node))
            # guard: yaml-alias-inside-own-anchor
            if size is None:
                raise _Refused(
                    f"alias *{getattr(event, 'anchor', '')} inside its own anchor", event.start_mark
                )
            self._aliased += size
            # guard: yaml-aliases-multiply-refused
            if self._aliased > MAX_ALIASED:
                raise _Refused(
                    f"aliases standing for more than {MAX_ALIASED} values; refused, as they "
                    "would multiply (write the values out)",
                    event.start_mark,
                )
        else:
            self._depth += 1
            # guard: yaml-nesting-bounded
            if self._depth > MAX_DEPTH:
                raise _Refused(_too_deep(), event.start_mark)
            self._open.append(0)
            node = super().compose_node(parent, index)
            size = 1 + self._open.pop()
            self._depth -= 1
            if getattr(event, "anchor", None):
                self._sizes[id(node)] = size
        if self._open:
            self._open[-1] += size
        return node


class _UniqueKeysConstructor(SafeConstructor):
    """PyYAML's safe constructor, refusing a mapping that gives a key twice (a merge key's
    values, ``<<: *base``, may still be overridden: that is what merging is for)."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    twice = key in seen
                except TypeError:  # unhashable: refused by the constructor below
                    continue
                # guard: yaml-key-given-twice-refused
                if twice:
                    raise _Refused(
                        f"key {key!r} given twice in one mapping; give each key once",
                        key_node.start_mark,
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)


class _CoreResolver(Resolver):
    """YAML 1.2's core schema, as js-yaml (promptfoo's reader) and most tools now read
    YAML: ``yes``, ``no``, ``on`` and ``off`` are texts, not booleans; ``017`` is 17;
    ``0o17`` is octal; a date or ``12:30`` is a text. PyYAML's own is YAML 1.1's."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 (PyYAML fills it per class)


for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("merge", r"^(?:<<)$", "<"),
):
    _CoreResolver.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first)
    )


def _core_int(constructor: Any, node: Node) -> int:
    """An int as YAML 1.2 writes one: decimal (a leading 0 too), ``0o`` octal, ``0x`` hex."""
    text = str(constructor.construct_scalar(node))
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)


_UniqueKeysConstructor.add_constructor("tag:yaml.org,2002:int", _core_int)


try:  # libyaml scans and parses; nodes are composed here, where they are counted
    from yaml._yaml import CParser as _Parser

    class _Loader(_BoundedComposer, _Parser, _UniqueKeysConstructor, _CoreResolver):
        def __init__(self, text: str) -> None:
            _Parser.__init__(self, text)
            _UniqueKeysConstructor.__init__(self)
            _CoreResolver.__init__(self)
            Composer.__init__(self)
            self.bound()

except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Loader(  # type: ignore[no-redef]
        Reader, Scanner, Parser, _BoundedComposer, _UniqueKeysConstructor, _CoreResolver
    ):
        def __init__(self, text: str) -> None:
            Reader.__init__(self, text)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)
            _UniqueKeysConstructor.__init__(self)
            _CoreResolver.__init__(self)
            self.bound()
