"""The models an OpenAI-compatible endpoint lists at ``GET {base_url}/models``: asked when
OPENAI_BASE_URL names an endpoint and nothing names a model (the openai SDK's habit), so
that a server of one model (vLLM, llama.cpp, a local LiteLLM) serves a run without
``--model``.

Asked within bounds: one request, ``LIST_TIMEOUT_S`` from connecting to its last byte, a
body of at most ``MAX_LIST_BYTES``, no redirect followed (the key goes to the URL given,
nowhere else), nothing retried. Whatever goes wrong is no list (None), never an error: the
caller then asks for the model's name as before. The key is sent as the client sends it and
never said.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

#: Seconds the whole request may take.
LIST_TIMEOUT_S = 5.0
#: The largest body read: a list of a few thousand models.
MAX_LIST_BYTES = 2**20
#: The longest model id taken (a name longer is no list).
MAX_ID_CHARS = 256


def listed_models(base_url: str, headers: Mapping[str, str]) -> list[str] | None:
    """The model ids ``GET {base_url}/models`` lists, in its order, asked with ``headers``
    (the key's); None when it does not answer 200 with OpenAI's list (``{"data": [{"id":
    ...}, ...]}``) in time and size. ``base_url`` holds no credentials."""
    import httpx  # here: only this resolution asks, and httpx is slow to import

    url = base_url.rstrip("/") + "/models"
    started = time.monotonic()
    body = b""
    try:
        with (
            httpx.Client(timeout=LIST_TIMEOUT_S, follow_redirects=False) as client,
            client.stream("GET", url, headers=dict(headers)) as reply,
        ):
            if reply.status_code != 200:
                return None
            for chunk in reply.iter_bytes():
                body += chunk
                # guard: model-list-body-capped
                if len(body) > MAX_LIST_BYTES:
                    return None
                # guard: model-list-whole-request-timed
                if time.monotonic() - started > LIST_TIMEOUT_S:
                    return None
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError):
        return None
    return _ids(body)


def _ids(body: bytes) -> list[str] | None:
    """The ids of OpenAI's model list, or None when ``body`` is not one."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    listed = data.get("data") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return None
    ids = [item.get("id") for item in listed if isinstance(item, dict)]
    # guard: model-list-ids-named-short
    if not ids or not all(isinstance(i, str) and 0 < len(i.strip()) <= MAX_ID_CHARS for i in ids):
        return None
    return [str(i) for i in ids]
