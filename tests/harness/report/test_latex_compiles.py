"""The LaTeX export compiles: a real pdflatex (Debian's texlive-latex-recommended, which
`make test` installs) typesets every table format's LaTeX inside a minimal document.
Escaping checked by eye or by regex is not enough: `%` comments out the rest of a row and
`$` opens maths, and only a compiler says the table still holds together."""

import shutil
import subprocess

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.results.statuses import STATUSES

from .test_table import record

PDFLATEX = shutil.which("pdflatex")
pytestmark = pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex is not installed (apt-get install texlive-latex-recommended; "
    "`make test` does it when run as root)",
)

DOCUMENT = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{booktabs}
\usepackage[landscape,margin=1cm]{geometry}
\begin{document}
%s
\end{document}
"""


@pytest.fixture
def results(tmp_path):
    """Every status, slices and arms holding LaTeX's special characters."""
    folder = tmp_path / "r"
    folder.mkdir()
    lines = []
    arms = ["react_text:guard=on", "cot_50%", "a&b_$x#1"]
    for a, arm in enumerate(arms):
        for t, status in enumerate(STATUSES):
            for repeat in range(2):
                r = record(
                    arm=arm,
                    task=f"t{t}",
                    repeat=repeat,
                    status=status,
                    correct=(t + repeat + a) % 2 == 0,
                    slice_="50% {off} ~x^2 \\y",
                )
                lines.append(r.model_dump_json())
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return str(folder)


def compile_latex(tmp_path, table: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "table.tex"
    source.write_text(DOCUMENT % table)
    return subprocess.run(
        [str(PDFLATEX), "-interaction=nonstopmode", "-halt-on-error", source.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [[], ["--by", "slice"], ["--vs", "react_text:guard=on"], ["--price-as", "gpt-5-mini"]],
    ids=["plain", "by-slice", "vs", "priced"],
)
def test_the_latex_table_compiles_with_pdflatex(tmp_path, results, args):
    exported = CliRunner().invoke(main, ["table", results, "--format", "latex", *args])
    assert exported.exit_code == 0, exported.output
    compiled = compile_latex(tmp_path, exported.output)
    assert compiled.returncode == 0, compiled.stdout[-3000:]
    assert (tmp_path / "table.pdf").stat().st_size > 1000


def test_an_unescaped_percent_would_not_compile(tmp_path):
    """The check has teeth: the cell pandas writes unescaped breaks the document."""
    broken = "\\begin{tabular}{ll}\n\\toprule\na & b \\\\\n0% [0%, 14%] & $/correct \\\\\n"
    broken += "\\bottomrule\n\\end{tabular}\n"
    assert compile_latex(tmp_path, broken).returncode != 0
