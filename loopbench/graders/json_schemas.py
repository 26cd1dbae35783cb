"""JSON Schemas a task set gives (the json grader's ``schema``, promptfoo's is-json value):
checked when the set loads, then met by answers with nothing fetched and in bounded time.

A schema is refused when the set loads if:

- it fails its draft's meta-schema (``check_schema``), or its ``$schema`` names a draft
  jsonschema does not know (none is fetched);
- a ``$ref`` (``$dynamicRef``, ``$recursiveRef``) does not resolve inside the schema: refs
  are resolved by a ``referencing`` registry that retrieves nothing, so an ``http:``,
  ``https:`` or ``file:`` ref, or a pointer to nowhere, is refused instead of fetched or
  failing every answer;
- its refs loop without reading into the answer: following ``$ref`` and the keywords that
  apply a subschema to the same value (``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``,
  ``then``, ``else``, ``dependentSchemas``, ``dependencies``; draft 3's ``extends``, ``type``
  and ``disallow``) leads back to where it started. A ref back into the schema through
  ``properties``, ``items`` and the like moves into a smaller part of the answer each time,
  so it ends; a loop through the keywords above never does (``{"$ref": "#"}``, or
  ``$defs`` a to b to a). Such a loop is refused even where only some answers would reach it;
- a ``pattern`` or ``patternProperties`` key is not a regular expression (Python's ``re``);
- it uses ``unevaluatedProperties`` with ``patternProperties``: jsonschema would match
  those patterns again, inside, with no time limit.

Meeting a schema: every ``pattern`` and ``patternProperties`` key (also where
``additionalProperties`` looks at them) is matched under the answer's time limit
(loopbench/graders/user_regex.py, loopbench/graders/answer_time.py), and each keyword checks the
time left, so the whole check ends within the limit (``TooSlow``). A check that cannot finish on an
answer (an object nested deeper than a recursive schema can follow) is ``GradedWrong``, never a
crash. ``format`` is not checked (as
jsonschema does by default), so ``format: regex`` compiles nothing.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from jsonschema import SchemaError, ValidationError, validators
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import specification_with

from loopbench.graders import user_regex
from loopbench.graders.answer_time import GradedWrong, time_left

# guard: schemas-then-applies-place
_IN_PLACE_ONE = ("not", "if", "then", "else", "extends")
# guard: schemas-allof-applies-place
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf", "extends", "type", "disallow")
_IN_PLACE_MAP = ("dependentSchemas", "dependencies")
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
_CHECKING = "checking the schema"
#: Frames below Python's recursion limit left to jsonschema between two keywords.
_FRAMES_SPARED = 150


def _refuse(uri: str) -> Resource[Any]:
    """A ref outside the schema: nothing is fetched, from the network or the disk."""
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs' init, unseen by mypy


#: What refs resolve in: the schema itself (and the drafts' meta-schemas jsonschema ships).
_REGISTRY: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]  # as above


def check(schema: Mapping[str, Any]) -> None:
    """``ValueError`` saying why ``schema`` is refused (the module's rules), else nothing."""
    kind = _draft(schema)
    try:
        with warnings.catch_warnings():  # re's FutureWarning on "[[": refused just below
            warnings.simplefilter("ignore", FutureWarning)
            # guard: schemas-check-schema
            kind.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"schema is not a JSON Schema ({exc.message})") from None
    except RecursionError:
        raise ValueError("schema is nested too deep to check") from None
    try:
        _check_refs(schema, kind)
    except ValueError:
        raise
    # guard: schemas-refs-draft-corner-cannot
    except Exception as exc:  # referencing failing on a draft's corner (draft 3's extends)
        raise ValueError(
            f"schema's refs cannot be read ({type(exc).__name__}); refs are resolved only "
            "inside the schema, nothing is fetched from the network or the disk"
        ) from None


def problem(schema: Mapping[str, Any], value: Any) -> ValidationError | None:
    """Where ``value`` first fails ``schema`` (checked when the set loaded), None when it
    meets it; ``GradedWrong`` (``TooSlow`` past the answer's time) when it cannot tell."""
    # guard: schemas-answer-check-fetches-nothing
    checker = _bounded(_draft(schema))(schema, registry=_REGISTRY)
    try:
        return next(iter(checker.iter_errors(value)), None)
    except RecursionError:  # _shallow_enough stops it first; kept as the last resort
        raise GradedWrong(
            "the schema's check went too deep on this answer and could not finish; graded wrong"
        ) from None
    except Unresolvable as exc:  # refused when the set loads; kept for a draft's corner
        raise GradedWrong(
            f"the schema's ref {getattr(exc, 'ref', '')!r} does not resolve; graded wrong"
        ) from None
    except GradedWrong:
        raise
    # guard: schemas-check-failing-answer-graded
    except Exception as exc:  # jsonschema failing on this schema and answer: the set's doing
        said = f"{type(exc).__name__}: {exc}"
        raise GradedWrong(
            f"the schema could not be checked on this answer ({said[:100]}); graded wrong"
        ) from None


def _draft(schema: Mapping[str, Any]) -> Any:
    """The validator class of the schema's draft."""
    if "$schema" not in schema:
        return validators.validator_for(schema)
    found = validators.validator_for(schema, default=None)
    # guard: schemas-unknown-schema-refused-not
    if found is None:
        said = str(schema["$schema"])
        shown = said if len(said) <= 80 else said[:77] + "..."
        raise ValueError(
            f"schema's $schema {shown!r} is not a JSON Schema draft known here (drafts 3, 4, "
            "6, 7, 2019-09, 2020-12 by their meta-schema's URL); nothing is fetched"
        )
    return found


def _check_refs(schema: Mapping[str, Any], kind: Any) -> None:
    """Every ref resolves inside the schema, no ref loops in place, every pattern compiles."""
    specification = specification_with(kind.ID_OF(kind.META_SCHEMA))
    root = specification.create_resource(schema)
    resolver = SPECIFICATIONS.combine(_REGISTRY).resolver_with_root(root)
    edges: dict[int, list[tuple[int, str]]] = {}
    keywords: set[str] = set()
    todo = [(root, resolver)]
    while todo:
        resource, here = todo.pop()
        contents = resource.contents
        if not isinstance(contents, Mapping) or id(contents) in edges:
            continue
        keywords.update(key for key in contents if isinstance(key, str))
        # guard: schemas-patterns-compile-as-re
        _check_patterns(contents)
        edges[id(contents)] = []
        for key, each in _in_place(contents):  # also where a draft lists it as no subschema
            edges[id(contents)].append((id(each), key))
            todo.append((specification.create_resource(each), here))
        for key in _REFS:
            ref = contents.get(key)
            if not isinstance(ref, str):
                continue
            try:
                # guard: schemas-ref-does-not-resolve
                resolved = here.lookup(ref)
            except Unresolvable:
                raise ValueError(
                    f"schema's {key} {_cut(ref)!r} does not resolve inside the schema; refs are "
                    "resolved only inside it, nothing is fetched from the network or the disk"
                ) from None
            target = resolved.contents
            if isinstance(target, Mapping):
                edges[id(contents)].append((id(target), f"{key} {_cut(ref)!r}"))
                todo.append((specification.create_resource(target), resolved.resolver))
            # guard: schemas-ref-what-not-schema
            elif not isinstance(target, bool):
                raise ValueError(f"schema's {key} {_cut(ref)!r} points at what is not a schema")
        todo.extend((sub, here.in_subresource(sub)) for sub in resource.subresources())
    # guard: schemas-unevaluatedproperties-with
    if {"unevaluatedProperties", "patternProperties"} <= keywords:
        raise ValueError(
            "schema uses unevaluatedProperties with patternProperties, which would match the "
            "patterns with no time limit; write additionalProperties instead"
        )
    # guard: schemas-refs-loop-place-refused
    loop = _loop(edges)
    if loop is not None:
        raise ValueError(
            f"schema's refs loop without reading into the answer ({' -> '.join(loop)}); a ref "
            "back into the schema must pass through properties, items or the like"
        )


def _in_place(contents: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The subschemas ``contents`` applies to the same value as itself, with their keyword."""
    for key in _IN_PLACE_ONE:
        if isinstance(contents.get(key), Mapping):
            yield key, contents[key]
    for key in _IN_PLACE_MANY:
        if isinstance(contents.get(key), list):
            yield from ((key, each) for each in contents[key] if isinstance(each, Mapping))
    for key in _IN_PLACE_MAP:
        if isinstance(contents.get(key), Mapping):
            for name, each in contents[key].items():
                if isinstance(each, Mapping):
                    yield f"{key} {_cut(str(name))!r}", each


def _loop(edges: Mapping[int, list[tuple[int, str]]]) -> list[str] | None:
    """The keywords of a loop in ``edges`` (node to its in-place subschemas), if one."""
    done: set[int] = set()
    for start in edges:
        if start in done:
            continue
        path: list[tuple[int, str]] = [(start, "")]
        on_path = {start}
        steps = [iter(edges[start])]
        while steps:
            step = next(steps[-1], None)
            if step is None:
                node, _ = path.pop()
                on_path.discard(node)
                done.add(node)
                steps.pop()
                continue
            child, how = step
            if child in on_path:
                at = next(i for i, (node, _) in enumerate(path) if node == child)
                loop = [how for _, how in path[at + 1 :]] + [how]
                first = loop.index(min(loop))  # said the same whichever node the walk met first
                return loop[first:] + loop[:first]
            if child not in done and child in edges:
                path.append((child, how))
                on_path.add(child)
                steps.append(iter(edges[child]))
    return None


def _check_patterns(contents: Mapping[str, Any]) -> None:
    patterns = [contents["pattern"]] if isinstance(contents.get("pattern"), str) else []
    if isinstance(contents.get("patternProperties"), Mapping):
        patterns += [key for key in contents["patternProperties"] if isinstance(key, str)]
    for pattern in patterns:
        try:
            user_regex.compiled(pattern)
        except user_regex.NotARegex as exc:
            raise ValueError(
                f"schema's pattern {_cut(pattern)!r} is not a regular expression ({exc})"
            ) from None


def _cut(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


@functools.cache
def _bounded(kind: Any) -> Any:
    """``kind`` whose keywords check the answer's time left, and match patterns under it."""
    checks = {name: _timed(check) for name, check in kind.VALIDATORS.items()}
    # guard: schemas-uniqueitems-linear-time
    own = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    checks |= {name: _timed(check) for name, check in own.items() if name in checks}
    return validators.extend(kind, checks)


def _timed(check: Any) -> Any:
    def timed(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # guard: schemas-each-keyword-checks-answer
        time_left(_CHECKING)
        # guard: schemas-check-too-deep-graded
        _shallow_enough()
        yield from check(validator, value, instance, schema) or ()

    return timed


def _shallow_enough() -> None:
    """``GradedWrong`` when the check is near Python's recursion limit: past it the error
    would come from inside jsonschema's dependencies (rpds turns it into a panic)."""
    try:
        sys._getframe(sys.getrecursionlimit() - _FRAMES_SPARED)
    except ValueError:  # the stack is not that deep
        return
    raise GradedWrong(
        "the schema's check went too deep on this answer (an object nested deeper than the "
        "check can follow); graded wrong"
    )


# The four keywords below are jsonschema's own (jsonschema/_keywords.py): three matching
# with loopbench/graders/user_regex.py instead of re.search, and uniqueItems in linear time (its own
# compares every pair of items it cannot sort: seconds for a few thousand, past the limit).


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not user_regex.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if user_regex.search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in named and not any(user_regex.search(p, key) for p in patterns)
    ]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        said = ", ".join(repr(each) for each in sorted(extras, key=str))
        yield ValidationError(f"Additional properties are not allowed ({said} unexpected)")


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Hashable] = set()
    for item in instance:
        key = _equality_key(item)
        if key in seen:
            yield ValidationError(f"{_cut(repr(instance))} has non-unique elements")
            return
        seen.add(key)


def _equality_key(value: Any) -> Hashable:
    """A key two JSON values share exactly when jsonschema holds them equal: numbers by
    value (1 is 1.0), booleans apart from numbers, arrays and objects by what they hold."""
    if isinstance(value, bool):
        # guard: schemas-uniqueitems-compares-numbers
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, Mapping):
        return ("object", frozenset((k, _equality_key(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("array", tuple(_equality_key(v) for v in value))
    return ("null", None) if value is None else ("other", repr(value))
