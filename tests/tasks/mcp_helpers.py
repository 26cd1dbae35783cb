"""What the MCP tests share: a task set whose tools a test server serves, a scripted model
that calls them in every tool-using pattern, and the runs a results folder holds."""

import json
import os
import re
import sys
from pathlib import Path

from loopbench.harness.models.scripted import text_reply, tool_reply

SERVER = Path(__file__).with_name("mcp_test_server.py")
TOOL_ARMS = ["react", "react_text", "rewoo", "plan_execute", "plan"]
FINAL = "Action: finish[done]"


def server_set(folder: Path, words: list[str], extra: str = "", server_args: str = "") -> Path:
    """A task set in ``folder`` asking one question per word (``shout:`` before a word
    calls shout, else reverse), its tools served by the test server."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"id": f"t{n}", "question": f"Use WORD={w}", "expected": {"entities": ["x"]}})
        for n, w in enumerate(words)
    ]
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    command = [sys.executable, str(SERVER), str(folder / "calls.jsonl"), str(folder / "pids")]
    argv = json.dumps(command + ([server_args] if server_args else []))
    entry = f'[[mcp]]\nname = "counting"\ncommand = {argv}\n{extra}'
    (folder / "taskset.toml").write_text(f'name = "served"\n\n{entry}')
    return folder


def calls(folder: Path) -> list[dict]:
    path = folder / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def pids(folder: Path) -> list[int]:
    path = folder / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child is gone in all but name
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False


def _plan_step(tool: str, args: dict) -> dict:
    return {"tool": tool, "args": args, "why": "asked"}


def the_word(text):
    """The word a test question names: ``WORD=abc``."""
    return re.search(r"WORD=(\S+?)(?=[\s.,;]|$)", text).group(1)


def scripted(tool_for, results_seen, find=the_word):
    """A model playing every tool-using pattern: it calls ``tool_for(word)`` with what
    ``find`` reads in the request (the question's word) once, then answers;
    ``results_seen(text)`` says whether a tool's result is in the conversation already."""

    def reply(request):
        said = "\n".join(m.content for m in request.messages)
        word = find(said + "\n" + request.system)
        tool, args = tool_for(word)
        if request.tool_choice == "submit_plan":
            return tool_reply(("submit_plan", {"steps": [_plan_step(tool, args)]}))
        if request.tool_choice == "plan":
            step = {"id": 1, "description": f"use {tool} on WORD={word}"}
            return tool_reply(("plan", {"steps": [step]}))
        observed = any(m.role == "tool" for m in request.messages) or results_seen(said)
        if not observed:
            if any(t.name == tool for t in request.tools):
                return tool_reply((tool, args))
            if "Action:" in request.system:
                return text_reply(f"Thought: use it\nAction: {tool}[{next(iter(args.values()))}]")
        return text_reply(FINAL)

    return reply


def runs(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def tool_events(out: Path) -> list[dict]:
    """Every tool call of every trace in ``out``: its run, tool, arguments, ok and result."""
    found = []
    for line in (out / "traces.jsonl").read_text().splitlines():
        trace = json.loads(line)
        events = trace.get("events", trace if isinstance(trace, list) else [])
        found += [
            dict(e, run_id=trace.get("run_id")) for e in events if e.get("kind") == "tool_call"
        ]
    return found
