import os
import stat
import tempfile
from pathlib import Path

import pytest

from loopbench.sandbox.isolation import LEVELS, probe
from loopbench.sandbox.run import Sandbox
from tests.sandbox.sandboxing import FAST, Started


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(FAST)


@pytest.fixture(scope="module", params=LEVELS)
def isolated(request: pytest.FixtureRequest) -> Sandbox:
    why = probe(request.param)
    if why:
        pytest.skip(f"isolation {request.param!r} does not work on this machine: {why}")
    return Sandbox(FAST, isolation=request.param)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Started:
    """The processes and boxes this test's runs start (see ``Started``)."""
    return Started(monkeypatch)


@pytest.fixture
def secret_file():
    """A key file any local user could read: only the sandbox stands in the way."""
    folder = tempfile.mkdtemp(prefix="loopbench-secret-")
    os.chmod(folder, 0o755)
    path = Path(folder, "id_rsa")
    path.write_text("-----BEGIN FAKE KEY----- s3cr3t-m4t3r14l")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    yield path
    path.unlink()
    os.rmdir(folder)
