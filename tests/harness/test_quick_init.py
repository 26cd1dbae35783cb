"""quick_init: a frozen dataclass's __init__, cheaper, doing exactly what the dataclass's own
did (kept as its ``__wrapped__``): the same parameters and defaults, the same instances,
still frozen."""

import dataclasses
import inspect
from typing import Any

import pytest

from loopbench.harness.models import types
from loopbench.harness.quick_init import quick_init
from loopbench.harness.tools import ToolResult

CALL = types.ToolCall("c1", "lookup", "{}")
MESSAGE = types.Message("assistant", "x", (CALL,), None)
#: Each class given quick_init, and the arguments of instances to compare: none (defaults),
#: some, all.
MADE: list[tuple[type, tuple[Any, ...]]] = [
    (types.ToolCall, ("c1", "lookup", "{}")),
    (types.Message, ("user",)),
    (types.Message, ("assistant", "x", (CALL,), None, ())),
    (types.ModelRequest, ("m", (MESSAGE,))),
    (types.ModelRequest, ("m", (MESSAGE,), "s", (), 0.5, 40, ("\n",), "auto", 1.0, 7, "low", 9)),
    (types.Usage, ()),
    (types.Usage, (1, 2, 0, 0, 0, 1, 3)),
    (types.ModelResponse, (MESSAGE,)),
    (types.ModelResponse, (MESSAGE, "length", types.Usage(1, 2), 2, True, 0.25, True)),
    (ToolResult, (True, "Paris.")),
    (ToolResult, (False, "Error", "{}", True)),
]


def by_dataclass_init(cls: type, args: tuple[Any, ...]) -> Any:
    made = object.__new__(cls)
    cls.__init__.__wrapped__(made, *args)  # type: ignore[misc]
    return made


@pytest.mark.parametrize(("cls", "args"), MADE)
def test_an_instance_is_the_one_the_dataclass_init_made(cls, args):
    quick, theirs = cls(*args), by_dataclass_init(cls, args)
    assert quick == theirs and dataclasses.astuple(quick) == dataclasses.astuple(theirs)
    assert [type(v) for v in dataclasses.astuple(quick)] == [
        type(v) for v in dataclasses.astuple(theirs)
    ]


@pytest.mark.parametrize("cls", sorted({cls for cls, _ in MADE}, key=lambda c: c.__name__))
def test_the_quick_init_takes_the_parameters_the_dataclass_init_took(cls):
    init = cls.__init__
    assert init is not init.__wrapped__ and init.__qualname__ == f"{cls.__qualname__}.__init__"
    ours = inspect.signature(init, follow_wrapped=False).parameters.values()
    theirs = inspect.signature(init.__wrapped__).parameters.values()
    assert [(p.name, p.kind) for p in ours] == [(p.name, p.kind) for p in theirs]
    # A default factory's marker differs on each side (ModelResponse's usage): not compared.
    ours_defaults = {p.name: p.default for p in ours if p.name != "usage"}
    assert ours_defaults == {p.name: p.default for p in theirs if p.name != "usage"}
    assert types.ModelRequest(model="m", messages=()) == types.ModelRequest("m", ())
    with pytest.raises(TypeError):
        types.ModelRequest("m")  # type: ignore[call-arg]  # messages is required


def test_a_default_factory_makes_a_new_value_each_time_and_fields_stay_frozen():
    first, second = (types.ModelResponse(types.Message("assistant")) for _ in range(2))
    assert first.usage == types.Usage() and first.usage is not second.usage
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.retries = 1  # type: ignore[misc]
    assert dataclasses.replace(first, retries=3).retries == 3


def test_a_class_it_does_not_handle_keeps_the_dataclass_init():
    @dataclasses.dataclass(frozen=True)  # not slotted: no slot descriptors to set
    class Plain:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a >= 0

    for cls in (Plain, Checked):
        init = cls.__init__
        assert quick_init(cls).__init__ is init
