import asyncio

from pydantic import BaseModel

from loopbench.harness.tools import Tool, ToolFailure, ToolSet


class Args(BaseModel):
    n: int


def boom(args: Args) -> str:
    raise RuntimeError("disk on fire")


def refuse(args: Args) -> str:
    raise ToolFailure(f"Not found: nothing numbered {args.n}.")


TOOLS = ToolSet(
    [
        Tool("double", "Double n.", Args, lambda a: str(a.n * 2)),
        Tool("boom", "Always fails.", Args, boom),
    ]
)


def invoke(name, arguments):
    return asyncio.run(TOOLS.invoke(name, arguments))


def test_valid_call_runs_and_keys_the_arguments():
    result = invoke("double", '{"n": 4}')
    assert (result.ok, result.content, result.args_key) == (True, "8", '{"n": 4}')


def test_invalid_json_is_a_readable_result():
    result = invoke("double", "{n: 4")
    assert not result.ok and "not valid JSON" in result.content and '"n"' in result.content


def test_unknown_tool_lists_the_tools():
    result = invoke("triple", "{}")
    assert not result.ok and "no tool named 'triple'. Tools: double, boom." in result.content


def test_schema_violation_names_the_field():
    result = invoke("double", '{"n": "four"}')
    assert not result.ok and "n: Input should be a valid integer" in result.content


def test_exception_in_tool_becomes_a_result():
    result = invoke("boom", '{"n": 1}')
    assert not result.ok and "RuntimeError: disk on fire" in result.content


def test_tool_failure_fails_with_exactly_its_text():
    tools = TOOLS.with_tools(Tool("refuse", "Always refuses.", Args, refuse))
    result = asyncio.run(tools.invoke("refuse", '{"n": 7}'))
    assert result == type(result)(False, "Not found: nothing numbered 7.", '{"n": 7}')


def test_schema_comes_from_the_arguments_model():
    assert TOOLS.specs[0].parameters["properties"]["n"]["type"] == "integer"


def test_with_tools_leaves_the_original_untouched():
    extended = TOOLS.with_tools(Tool("x", "x", Args, lambda a: ""))
    assert TOOLS.names == ["double", "boom"] and extended.names == ["double", "boom", "x"]
