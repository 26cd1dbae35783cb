"""What every pattern shares on a coding task (``ctx.code`` set): the answer is code.

- One first attempt for every arm: the same system text, the task's specification and
  the same output limit, so arms whose first request is identical can share its
  response (``run --paired``) and repair the same first attempt (seed 003, 3.5).
- How a test result is shown to the model: the first failing test's name, input,
  expected and actual value, or why the code did not run at all.
- Tests the model wrote, made into a suite (``reflexion:check=self_tests``).
"""

from __future__ import annotations

import ast

from loopbench.graders.extract import extract_code
from loopbench.harness.models.types import Message, ModelRequest, ModelResponse
from loopbench.harness.patterns.base import Outcome, RunContext, answer_reply, stripped
from loopbench.harness.patterns.oneshot import answer_once
from loopbench.harness.patterns.prompts import Slot
from loopbench.sandbox.suite_result import SuiteResult

CODE_SYSTEM = (
    "Write the Python code the task asks for. Reply with the complete code, with any imports "
    "it needs, in one ```python code block."
)
#: Room for a whole function; an answer cut at this limit is ``truncated``, never graded.
CODE_OUTPUT_TOKENS = 1024


#: The slot of a pattern's prompt for code, which every pattern fills with ``CODE_SYSTEM``.
CODE_SLOT = Slot("code", CODE_SYSTEM, about="the system prompt asking for code (coding tasks)")


async def first_attempt(ctx: RunContext, system: str = CODE_SYSTEM) -> Outcome:
    """The first attempt at the code, asked the same way by every pattern (unless an arm
    overrides its ``code`` slot: ``system``)."""
    return await answer_once(ctx, system, CODE_OUTPUT_TOKENS, stripped)


async def ask_again(
    ctx: RunContext, messages: list[Message], request: str, system: str = CODE_SYSTEM
) -> Outcome:
    """Ask for corrected code in the same conversation, under the first attempt's system
    text (``system``); ``messages`` gains both turns."""
    messages.append(Message("user", request))
    response: ModelResponse = await ctx.model.complete(
        ModelRequest(
            ctx.model_name,
            tuple(messages),
            system=system,
            max_output_tokens=CODE_OUTPUT_TOKENS,
        )
    )
    messages.append(response.message)
    return answer_reply(ctx, response, messages)


def failure_report(result: SuiteResult) -> str:
    """A failed check as the model reads it: what failed, never the whole suite."""
    if result.status == "syntax_error":
        return f"Your code could not be run: {result.detail}."
    if result.status == "crashed":
        return f"Your code failed before any test ran: {result.detail}."
    failure = result.first_failure
    if failure is None:
        return f"The tests did not finish ({result.status}: {result.detail})."
    return (
        f"A test failed: {failure.test}\n"
        f"input: {failure.input}\n"
        f"expected: {failure.expected}\n"
        f"actual: {failure.actual}\n"
        f"({result.passed} passed, {result.failed} failed.)"
    )


TESTS_SYSTEM = (
    "You write unit tests before any implementation exists. Reply with assert statements "
    "that call the function or class the task names, in one ```python code block."
)
TESTS_REQUEST = (
    "Write 3 to 6 tests for this task: assert statements, each checking one behaviour the "
    "specification states. No implementation.\n\n{{ question }}"
)
#: The slots of the request for the model's own tests, for a pattern that asks for them.
OWN_TESTS_SLOTS = (
    Slot("own_tests", TESTS_SYSTEM, about="the system prompt asking for the model's own tests"),
    Slot(
        "own_tests_request",
        TESTS_REQUEST,
        ("question",),
        about="the request for the model's own tests, with the specification",
        needs=("question",),
    ),
)


def own_tests_request(ctx: RunContext, request: str, system: str = TESTS_SYSTEM) -> ModelRequest:
    """The request for the model's own tests: it sees the specification (in ``request``, the
    rendered ``own_tests_request`` slot), never its code."""
    return ModelRequest(
        ctx.model_name,
        (Message("user", request),),
        system=system,
        max_output_tokens=CODE_OUTPUT_TOKENS,
    )


def suite_from_tests(reply: str, entry_point: str) -> tuple[str, int]:
    """The tests in a reply as a suite, and how many tests it holds.

    Each ``def test_*`` function is a test, and so is each other top-level statement that
    checks something (an ``assert``, a loop of asserts, a ``with pytest.raises(...)``);
    imports, definitions and set-up statements before them are kept, and ``pytest`` is
    the sandbox's stand-in (its ``raises``). Inside a test the entry point's name is the
    candidate, so ``assert add(1, 2) == 3`` tests the code under check. A reply without a
    test holds none: the caller decides what an empty check means.
    """
    code = extract_code(reply, entry_point)
    if code is None:
        return "", 0
    try:
        return _suite(ast.parse(code), entry_point)
    # guard: own-tests-nested-too-deep
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # nested too deep to read
        return "", 0


def _suite(module: ast.Module, entry_point: str) -> tuple[str, int]:
    kept: list[str] = []
    setup: list[str] = []
    tests: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            body = [ast.unparse(statement) for statement in node.body]
            tests.append(_test(len(tests) + 1, entry_point, [*setup, *body], node.name))
        elif _imports_pytest(node):
            kept.append("import loopbench_suite as pytest")
        elif isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef):
            if getattr(node, "name", None) != entry_point:  # never the model's own solution
                kept.append(ast.unparse(node))
        # guard: model-own-checks-loop-tests
        elif _checks(node):
            tests.append(_test(len(tests) + 1, entry_point, [*setup, ast.unparse(node)]))
        else:
            setup.append(ast.unparse(node))
    return "\n\n".join([*kept, *tests]) + "\n", len(tests)


def _imports_pytest(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name == "pytest" for alias in node.names)
    return isinstance(node, ast.ImportFrom) and node.module == "pytest"


def _checks(node: ast.stmt) -> bool:
    """Whether a statement checks something: it holds an assert or a ``raises`` block."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Assert):
            return True
        if isinstance(inner, ast.With) and any(
            "raises" in ast.unparse(item.context_expr) for item in inner.items
        ):
            return True
    return False


def _test(number: int, entry_point: str, lines: list[str], name: str = "") -> str:
    body = "\n".join(f"    {line}" for text in lines for line in text.splitlines())
    label = name if name.startswith("test_") else f"test_own_{number}"
    return f"def {label}(candidate):\n    {entry_point} = candidate\n{body}"
