"""What redaction costs: building the redactor, and redacting what a run writes.

With a key and a URL's user name and password held, every line written (a record, a
trace) and every reply is searched for every form of each. This times building the
redactor for them and redacting a trace line of ``--kb`` kilobytes of ordinary agent
text (no secret in it: the common case), and one with the key echoed in each form.
With no secret held, redaction returns the text at once.

    .venv/bin/python bench/redaction.py
    .venv/bin/python bench/redaction.py --kb 64 --repeats 200
"""

from __future__ import annotations

import argparse
import base64
import json
import time

from loopbench.harness.redaction import Redactor

KEY = "sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz0123456789abcdefGHIJklmnOP"
USER, PASSWORD = "tok_7Hq2Rm9Zx4Lp8Vb3Jw", "pw/Z9#q?X@3kLm7%Rt:5"
EVENT = {
    "t": 1.25,
    "kind": "model_call",
    "content": "Thought: I should look up when the Eiffel Tower was completed.\n"
    "Action: lookup[Eiffel Tower]",
    "tool_calls": [{"id": "call_1", "name": "lookup", "arguments": '{"title": "Paris"}'}],
    "usage": {"prompt_tokens": 812, "completion_tokens": 41, "cached_tokens": 512},
}


def trace_line(kb: float, echo: str = "") -> str:
    events = [EVENT]
    while len(json.dumps({"events": events})) < kb * 1024:
        events = [*events, EVENT]
    if echo:
        events = [*events, {"kind": "tool_result", "output": echo}]
    return json.dumps({"run_id": "r1", "events": events})


def per_call_ms(redactor: Redactor, text: str, repeats: int) -> float:
    began = time.perf_counter()
    for _ in range(repeats):
        redactor(text)
    return (time.perf_counter() - began) / repeats * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=float, default=8.0, help="Size of the trace line.")
    parser.add_argument("--repeats", type=int, default=500)
    args = parser.parse_args()
    began = time.perf_counter()
    redactor = Redactor([KEY, USER, PASSWORD], [(USER, PASSWORD)])
    built = time.perf_counter() - began
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    echoes = " ".join([KEY, json.dumps(KEY), escaped, KEY.upper(), basic])
    plain, echoed = trace_line(args.kb), trace_line(args.kb, echoes)
    assert redactor(plain) == plain and KEY[:8] not in redactor(echoed)
    print(f"building the redactor for a key, a user name and a password: {built * 1000:.0f} ms")
    for name, text in (("no secret in it", plain), ("the secrets echoed", echoed)):
        ms = per_call_ms(redactor, text, args.repeats)
        kb = len(text) / 1024
        print(f"a {kb:.1f} KB trace line, {name}: {ms:.3f} ms ({ms / kb * 1000:.0f} us per KB)")
    print(f"with no secret held: {per_call_ms(Redactor(), plain, args.repeats) * 1000:.1f} us")


if __name__ == "__main__":
    main()
