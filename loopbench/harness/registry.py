"""Names -> what they stand for: one registry per kind (patterns, tools, graders, task sets).

A kind's shipped entries are added as its modules are imported, those of installed plugins
the first time the kind is looked up: every entry point of its group (loopbench/harness/plugins.py)
is loaded then, once. A name is added
once; a name no one added is refused with the registered names and how to add one.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Generic, TypeVar

from loopbench.harness.errors import UnknownName
from loopbench.harness.plugins import PluginError

EntryT = TypeVar("EntryT")


class Registry(Generic[EntryT]):
    """One kind's entries by name."""

    def __init__(self, kind: str, group: str, unknown: type[UnknownName], add_with: str) -> None:
        self.kind = kind
        """What an entry is, as messages say it: ``"tool"``."""
        self.group = group
        """The entry point group installed plugins declare their modules in."""
        self.unknown = unknown
        """What an unknown name is refused with."""
        self.add_with = add_with
        """How a plugin adds one: ``"decorate its factory with @loopbench.register_tool(...)"``."""
        self._entries: dict[str, EntryT] = {}
        self._plugins_loaded = False

    def add(self, name: str, entry: EntryT) -> None:
        # guard: name-registered-once
        if name in self._entries:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._entries[name] = entry

    def registered(self) -> dict[str, EntryT]:
        """Every entry by name, as added: the shipped ones first, then plugins'."""
        if not self._plugins_loaded:
            self.take(load_entry_points(self.group))
        return dict(self._entries)

    def take(self, loaded: list[tuple[EntryPoint, object]]) -> None:
        """Take the installed plugins' entry points of this kind, loaded."""
        for point, found in loaded:
            if not isinstance(found, ModuleType):  # a module adds its own as it imports
                self.adopt(point, found)
        self._plugins_loaded = True

    def adopt(self, point: EntryPoint, loaded: object) -> None:
        """An entry point naming an object, not a module: ignored, but by task sets (for
        which it is the set of the entry point's name)."""

    def lookup(self, name: str) -> EntryT:
        known = self.registered()
        if name not in known:
            raise self.unknown(self.refusal(name, list(known)))
        return known[name]

    def refusal(self, name: str, names: list[str]) -> str:
        """Why ``name`` is refused: the registered ``names`` one of which is expected, and
        how to add one."""
        quoted = [repr(n) for n in names]
        either = " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
        how = self.how_to_add(f"to add a {self.kind}")
        return f"no {self.kind} named {name!r} is registered: give {either}; {how}"

    def how_to_add(self, lead: str) -> str:
        return (
            f"{lead}, {self.add_with} in a module of your own, then pass --plugin your.module, "
            f"or declare the module as an entry point in the group {self.group!r} of your "
            "package (docs/api.md: Plugins)"
        )


def load_entry_points(group: str) -> list[tuple[EntryPoint, object]]:
    """Load every entry point of ``group``; returns each with what it names."""
    loaded = []
    for point in entry_points(group=group):
        try:
            loaded.append((point, point.load()))
        except Exception as exc:  # a broken plugin names itself instead of a traceback
            source = point.dist.name if point.dist is not None else "an installed package"
            raise PluginError(
                f"plugin {point.name!r} ({point.value}, from {source}, entry point group "
                f"{group}) cannot be loaded: {type(exc).__name__}: {exc}"
            ) from None
    return loaded
