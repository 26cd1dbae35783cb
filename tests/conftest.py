"""Every test starts without a developer's endpoint settings: a run must not reach an
endpoint named in the shell (OPENAI_BASE_URL is read as LOOPBENCH_BASE_URL is)."""

import pytest

ENDPOINT_VARIABLES = (
    "LOOPBENCH_BASE_URL",
    "LOOPBENCH_MODEL",
    "LOOPBENCH_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_endpoint_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
