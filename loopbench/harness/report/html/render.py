"""``loopbench report``: one self-contained HTML page of a results folder, to open offline
and share.

The page holds the summary table (``loopbench.harness.report.table``), the frontier and status plots
(``loopbench.harness.report.plots``, as SVG images inside the page), the failure taxonomy
(``loopbench.harness.report.failures``), a task-by-arm matrix, and every run with its trace as a
conversation (above a few thousand runs, a fixed sample of them: ``_sample``). Styles and
script are inline; a Content-Security-Policy forbids loading anything and runs only the
page's own script (by its hash). Text from the results reaches the page escaped by the
template, or as JSON with every ``<`` escaped that the script puts into the page as text
nodes only, so a reply holding ``</script>`` is shown, never run.
"""

from __future__ import annotations

import base64
import hashlib
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined
from markupsafe import Markup

from loopbench.harness.report.html._page import Page, build_page
from loopbench.harness.results.frames import Pricing

__all__ = ["page_json", "render_page", "report_html"]

#: Characters JSON may hold that would end a script element or a JavaScript string early.
_UNSAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def page_json(data: Any) -> str:
    """``data`` as JSON to sit inside ``<script type="application/json">``: no ``<`` in it
    (so no ``</script>`` or ``<!--``), and no NaN, which JSON.parse refuses."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # guard: report-data-cannot-end-script
    return text.translate(_UNSAFE)


def _resource(name: str) -> str:
    return (files(__package__) / name).read_text(encoding="utf-8")


def render_page(page: Page) -> str:
    """The HTML document of ``page``."""
    script = _resource("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    environment = Environment(
        autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True
    )
    template = environment.from_string(_resource("template.html"))
    return template.render(
        page=page,
        summary=Markup(page.summary),
        step_budget=Markup(page.step_budget),
        css=Markup(_resource("report.css")),
        js=Markup(script),
        script_hash=f"sha256-{digest}",
        data=Markup(page_json(page.data)),
    )


def report_html(results: Path, pricing: Pricing, reference: str | None = None) -> str:
    """The report of a results folder; see ``build_page`` for the errors it raises."""
    return render_page(build_page(results, pricing, reference))
