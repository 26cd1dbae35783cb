"""The code in a model's reply: ``extract_code(reply, entry_point)``. Nothing is run.

The rules, in order:

1. Line endings become ``\\n``.
2. Fenced blocks: a line of three or more backticks, tagged ``python``, ``py``, ``python3``
   or ``py3`` (any case) or untagged, up to a line of at least as many backticks. Blocks in
   another language (``bash``, ``text``, ``output``...) are not code. A block still open
   at the end of the reply is not used: the reply was most likely cut off by the token
   limit, and half a function would be graded as if it were the answer; closed blocks
   before it still count. A block's common indentation is removed.
3. Of the blocks that parse, the *main* one is the last that defines the entry point at
   top level (``def``, ``async def`` or ``class`` NAME), so a corrected version later in
   the reply wins. Put before it, in reply order, are the earlier blocks that hold only
   imports, definitions and assignments (no asserts, prints or other calls at top level)
   and define a name the main block (or a block already taken) uses without defining it:
   a helper or an import shown separately. If no block defines the entry point, the last
   block that parses is the code (the sandbox then reports the missing entry point).
   An ``if __name__ == "__main__":`` section is cut from the blocks taken; nothing else
   in them changes.
4. With no Python fence at all (open or closed), a bare answer: from the first line
   starting (after any indentation) with ``def``, ``class``, ``async def``, ``import``,
   ``from X import`` or ``@``, to the end of the reply, cut before the line where parsing
   fails until what is left parses (trailing prose goes); if nothing is left, the next
   such line is tried.
5. ``None`` when there is no code that parses as Python: only prose, blocks that all fail
   to parse, or only a block left open (which is not then read as a bare answer either).
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
import warnings
from dataclasses import dataclass

PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})
_OPEN = re.compile(r"[ \t]*(?P<fence>`{3,})[ \t]*(?P<tag>[^\s`]*)[^`]*")
_CLOSE = re.compile(r"[ \t]*(?P<fence>`{3,})[ \t]*")
_BARE_START = re.compile(r"[ \t]*(def |class |async def |import |from [\w.]+ import\b|@)")
_DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


@dataclass(frozen=True)
class _Block:
    code: str
    tree: ast.Module


def extract_code(reply: str, entry_point: str) -> str | None:
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    fenced, opened = _fenced(text)
    if opened:
        chosen = _choose([b for b in map(_block, fenced) if b is not None], entry_point)
    elif (whole := _block(text.strip("\n"))) and entry_point in top_names(whole.tree, True):
        chosen = [whole]  # a file of code, constants before the function included
    else:
        chosen = [bare] if (bare := _bare(text)) is not None else []
    if not chosen:
        return None
    return "\n\n\n".join(_without_main_guard(b).rstrip() for b in chosen) + "\n"


def _fenced(text: str) -> tuple[list[str], bool]:
    """The contents of the closed Python (or untagged) fenced blocks, in order, and whether
    any Python block was opened (closed or not)."""
    found: list[str] = []
    opened = False
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = _OPEN.fullmatch(lines[i])
        if opening is None:
            i += 1
            continue
        width, python = len(opening["fence"]), opening["tag"].lower() in PYTHON_TAGS
        opened = opened or python
        end = next(
            (
                j
                for j in range(i + 1, len(lines))
                if (m := _CLOSE.fullmatch(lines[j])) and len(m["fence"]) >= width
            ),
            None,
        )
        if end is None:  # left open: cut off
            break
        if python:
            found.append(textwrap.dedent("\n".join(lines[i + 1 : end])))
        i = end + 1
    return found, opened


def _choose(blocks: list[_Block], entry_point: str) -> list[_Block]:
    mains = [i for i, b in enumerate(blocks) if entry_point in top_names(b.tree, defs_only=True)]
    if not mains:
        return blocks[-1:]
    taken = [blocks[mains[-1]]]
    needed = _needed(taken[0].tree)
    for block in reversed(blocks[: mains[-1]]):
        if all(isinstance(s, _DEFINITIONS) or _is_docstring(s) for s in block.tree.body) and (
            needed & top_names(block.tree)
        ):
            taken.insert(0, block)
            needed |= _needed(block.tree)
    return taken


def _bare(text: str) -> _Block | None:
    lines = text.split("\n")
    for start, line in enumerate(lines):
        if not _BARE_START.match(line):
            continue
        end = len(lines)
        while end > start:
            code = textwrap.dedent("\n".join(lines[start:end])).strip("\n")
            try:
                tree = _parse(code)
            except SyntaxError as exc:
                end = min(end - 1, start + (exc.lineno or 1) - 1)
                continue
            if tree.body:
                return _Block(code, tree)
            break
    return None


def _block(code: str) -> _Block | None:
    try:
        tree = _parse(code)
    except SyntaxError:
        return None
    return _Block(code, tree) if tree.body else None


def _parse(code: str) -> ast.Module:
    """``ast.parse``, with every failure a SyntaxError and no warnings (``"\\d"``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(code)
        except (ValueError, MemoryError, RecursionError) as exc:  # a NUL byte, deep nesting
            raise SyntaxError(str(exc)) from None


def top_names(tree: ast.Module, defs_only: bool = False) -> set[str]:
    """Names the module defines at top level: functions and classes, and unless
    ``defs_only`` also imports and assignment targets."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif defs_only:
            continue
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _needed(tree: ast.Module) -> set[str]:
    """Names the module reads but does not define anywhere, builtins aside."""
    read: set[str] = set()
    bound = top_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound - set(dir(builtins))


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _without_main_guard(block: _Block) -> str:
    lines = block.code.split("\n")
    for node in reversed(block.tree.body):
        if isinstance(node, ast.If) and _is_main_test(node.test):
            del lines[node.lineno - 1 : node.end_lineno]
    return "\n".join(lines)


def _is_main_test(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    sides = {ast.unparse(test.left), ast.unparse(test.comparators[0])}
    return isinstance(test.ops[0], ast.Eq) and sides == {"__name__", "'__main__'"}
