"""A frozen, slotted dataclass's ``__init__`` at half its cost, doing the same.

A frozen dataclass sets each field with ``object.__setattr__(self, name, value)``, which
packs its arguments in a tuple, slices it and looks the name up on the type: some 1,400
instructions a field, so that making a 13-field ``ModelRequest`` cost more than sending
its body's JSON. The value types of a model call (a request, its reply, usage) are made
several times a call. ``quick_init`` gives such a class an ``__init__`` that sets each slot
through the slot's own descriptor, found once: the same parameters, defaults and default
factories, the same instance, and the class stays frozen (assigning a field still raises
``FrozenInstanceError``). A class it does not handle (not slotted, ``__post_init__``,
keyword-only or non-init fields) keeps the dataclass's own ``__init__``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

#: The default of a field with a default factory: the factory is called when it is given.
_FACTORY = object()


def quick_init(cls: type[T]) -> type[T]:
    """``cls`` (a frozen, slotted dataclass), its ``__init__`` replaced as above."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not _handled(cls, fields):
        return cls
    names: dict[str, Any] = {"_FACTORY": _FACTORY}
    params, body = [], []
    for f in fields:
        names[f"_set_{f.name}"] = vars(cls)[f.name].__set__
        if f.default is not dataclasses.MISSING:
            names[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            names[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_FACTORY")
            body.append(f"if {f.name} is _FACTORY: {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"_set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body)
    exec(source, names)  # as dataclasses makes its own __init__, from text
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = dict(vars(cls)["__init__"].__annotations__)
    init.__doc__ = vars(cls)["__init__"].__doc__
    init.__wrapped__ = vars(cls)["__init__"]  # the dataclass's own, kept for comparison
    setattr(cls, "__init__", init)  # noqa: B010 (assigning the method itself)
    return cls


def _handled(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> bool:
    """Frozen and slotted, every field set by ``__init__`` by position, nothing else run."""
    return (
        getattr(cls, "__dataclass_params__").frozen  # noqa: B009
        and "__slots__" in vars(cls)
        and not hasattr(cls, "__post_init__")
        and all(f.init and not f.kw_only for f in fields)
        # No InitVar or ClassVar pseudo-field: every one a field set as it is given.
        and len(fields) == len(getattr(cls, "__dataclass_fields__"))  # noqa: B009
    )
