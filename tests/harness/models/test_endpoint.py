"""The endpoint settings: a base URL and key refused in one line before anything is written."""

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.models.endpoint import (
    EndpointNotConfigured,
    credentials,
    resolve_endpoint,
    without_credentials,
)

NO_KEYS = {"LOOPBENCH_API_KEY": None, "OPENAI_API_KEY": None}


@pytest.fixture(autouse=True)
def _no_endpoint_in_the_environment(monkeypatch):
    for name in ("LOOPBENCH_BASE_URL", "OPENAI_BASE_URL", "LOOPBENCH_MODEL", *NO_KEYS):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("http://alice:hunter2@127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://alice:hunter2@[::1]:1/v1", "http://[::1]:1/v1"),
        ("https://alice@[2001:db8::1]/v1/", "https://[2001:db8::1]/v1"),
        ("http://a:p%40ss@host/v1?x=1", "http://host/v1?x=1"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("http://host/", "http://host"),
    ],
)
def test_without_credentials_drops_user_info_keeps_the_host_and_the_trailing_slash(url, safe):
    assert without_credentials(url) == safe


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("notaurl", "not an http or https URL"),
        ("ftp://x", "not an http or https URL"),
        (" ", "not an http or https URL"),
        ("http:///v1", "names no host"),
        ("http://:8000/v1", "names no host"),
        ("http://127.0.0.1:abc/v1", "port 'abc' is not a number from 1 to 65535"),
        ("http://127.0.0.1:99999/v1", "port '99999' is not a number from 1 to 65535"),
        ("http://127.0.0.1:0/v1", "port '0' is not a number from 1 to 65535"),
        ("http://[::1/v1", "is not a URL"),
        ("http://host/v1\x01", "is not a URL"),
    ],
)
def test_a_base_url_that_cannot_be_an_endpoint_is_refused_in_one_line(url, cause):
    with pytest.raises(EndpointNotConfigured) as info:
        resolve_endpoint(url, "m")
    message = str(info.value)
    assert cause in message and "\n" not in message and "--base-url" in message


@pytest.mark.parametrize(
    "url",
    [
        "http://alice:hunter2@127.0.0.1:abc/v1",
        "http://alice:hunter2@[::1/v1",
        "http://alice:hunter2@host/v1\x01",
        "ftp://alice:hunter2@host/v1",
    ],
)
def test_the_refusal_of_a_base_url_never_shows_its_password(url):
    with pytest.raises(EndpointNotConfigured) as info:
        resolve_endpoint(url, "m")
    assert "hunter2" not in str(info.value) and "alice" not in str(info.value)


@pytest.mark.parametrize("key", ["sk-abc\r\n", "sk-\u00e9t\u00e9-0123", "sk with space", "sk-\x7f"])
def test_an_api_key_that_cannot_go_in_a_header_is_refused_without_showing_it(monkeypatch, key):
    monkeypatch.setenv("MY_KEY", key)
    with pytest.raises(EndpointNotConfigured) as info:
        resolve_endpoint("http://127.0.0.1:8000/v1", "m", "MY_KEY")
    message = str(info.value)
    assert "MY_KEY" in message and "\n" not in message
    assert key.strip() not in message and key[:4] not in message


def test_a_good_endpoint_is_resolved_with_its_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-good-0123")
    endpoint = resolve_endpoint("http://alice:hunter2@[::1]:8000/v1/", "m")
    assert endpoint.api_key == "sk-good-0123"
    assert endpoint.base_url == "http://alice:hunter2@[::1]:8000/v1/"  # the client needs them
    assert "hunter2" not in repr(endpoint) and "sk-good" not in repr(endpoint)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:abc/v1", "ftp://x", " ", "http://127.0.0.1:99999/v1"]
)
def test_run_refuses_a_bad_base_url_with_exit_2_one_line_and_nothing_written(tmp_path, url):
    out = tmp_path / "r"
    result = CliRunner().invoke(
        main,
        ["run", "--base-url", url, "--model", "m", "--arm", "direct", "--out", str(out)],
        env=NO_KEYS,
    )
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and "--base-url" in result.output
    assert not out.exists()


def test_run_refuses_a_key_with_a_line_break_without_echoing_it(tmp_path):
    out = tmp_path / "r"
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--base-url",
            "http://127.0.0.1:8000/v1",
            "--model",
            "m",
            "--arm",
            "direct",
            "--out",
            str(out),
        ],
        env={**NO_KEYS, "LOOPBENCH_API_KEY": "sk-secret-0123\r"},
    )
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and "LOOPBENCH_API_KEY" in result.output
    assert "sk-secret" not in result.output and not out.exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://alice:hun/ter2secret@127.0.0.1:8000/v1",
        "http://alice:hun#ter2secret@127.0.0.1/v1",
        "http://alice:?hunter2secret@127.0.0.1/v1",
        "http://alice:hun@ter2secret@127.0.0.1/v1",
        "http://admin:1234/x@host/v1",
    ],
)
def test_a_password_with_an_unencoded_reserved_character_is_refused_unshown(url):
    with pytest.raises(EndpointNotConfigured) as info:
        resolve_endpoint(url, "m")
    message = str(info.value)
    assert "percent-encode" in message and "\n" not in message
    assert "hun" not in message and "ter2" not in message and "alice" not in message
    assert "admin" not in message and "1234" not in message


def test_a_password_with_its_reserved_characters_percent_encoded_is_accepted():
    endpoint = resolve_endpoint("http://alice:hun%2Fter%23%3F%40@127.0.0.1/v1", "m")
    assert without_credentials(endpoint.base_url) == "http://127.0.0.1/v1"
    assert credentials(endpoint.base_url) == ("alice", "hun/ter#?@")
