"""Every test starts without a developer's endpoint settings: a run must not reach an
endpoint named in the shell (OPENAI_BASE_URL is read as LOOPBENCH_BASE_URL is, and
ANTHROPIC_BASE_URL chooses Anthropic's API)."""

import pytest

ENDPOINT_VARIABLES = (
    "LOOPBENCH_BASE_URL",
    "LOOPBENCH_MODEL",
    "LOOPBENCH_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_endpoint_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The patterns, tools, graders and task sets a test registers are gone after it."""
    import loopbench.harness.patterns.catalog
    import loopbench.tasks.loading  # noqa: F401  (the shipped task sets, registered)
    from loopbench.graders.registry import GRADERS
    from loopbench.harness.patterns.registry import PATTERNS
    from loopbench.tasks.taskset_registry import TASKSETS
    from loopbench.tasks.tool_registry import TOOLS

    for registry in (PATTERNS, TOOLS, GRADERS, TASKSETS):
        registry.registered()  # the shipped ones and installed plugins' are kept
        monkeypatch.setattr(registry, "_entries", dict(registry._entries))
