"""A missing optional extra is said with the command that installs it: the package
index's first (what a wheel's user runs), then a checkout's, the same for every extra;
and the package that is missing is named by its name, not by a module's."""

import importlib.util
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.executors.ray import INSTALL as RAY_INSTALL
from loopbench.harness.install_hints import install_command
from loopbench.harness.models.local import LocalModelError, model_file
from loopbench.harness.results.otlp import OtlpMissing, missing_package, require_otlp

FOLDER = Path(__file__).parents[2] / "results" / "reference" / "local-smollm2"


def test_the_command_is_the_wheels_then_the_checkouts():
    assert install_command("local") == (
        "pip install 'loopbench[local]' (in a checkout: pip install -e '.[local]')"
    )


def test_the_local_model_says_both_commands_when_llama_cpp_is_missing(monkeypatch):
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else found(name)
    )
    with pytest.raises(LocalModelError) as raised:
        model_file()
    assert install_command("local") in str(raised.value)


def test_ray_says_both_commands():
    assert "pip install 'loopbench[ray]'" in RAY_INSTALL
    assert "in a checkout: pip install -e '.[ray]'" in RAY_INSTALL


@pytest.mark.parametrize(
    ("module", "package"),
    [
        ("google", "protobuf"),
        ("google.protobuf.json_format", "protobuf"),
        ("opentelemetry", "opentelemetry-sdk"),
        ("opentelemetry.sdk.trace", "opentelemetry-sdk"),
        ("opentelemetry.exporter.otlp.proto.http", "opentelemetry-exporter-otlp-proto-http"),
        ("requests", "the module requests"),
    ],
)
def test_a_module_that_did_not_import_is_said_as_the_package_to_install(module, package):
    assert missing_package(module) == package


def test_export_without_protobuf_names_protobuf_and_the_otlp_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.protobuf.json_format", None)
    with pytest.raises(OtlpMissing, match=r"otlp extra is not installed \(protobuf is missing\)"):
        require_otlp()
    done = CliRunner().invoke(
        main, ["export", str(FOLDER), "--format", "otlp", "-o", str(tmp_path / "s.json")]
    )
    assert done.exit_code == 2
    assert "(protobuf is missing)" in done.output and install_command("otlp") in done.output
    assert "(google)" not in done.output
