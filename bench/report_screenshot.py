"""Render a results folder's HTML report and screenshot it in headless Chromium, to look at.

    .venv/bin/python bench/report_screenshot.py RESULTS [--out DIR] [--vs ARM] [--price-as MODEL]

Writes DIR/report.html, DIR/report.png (the whole page) and DIR/trace.png (the page with
a run's trace open: the first failed run, or the first that ``--open QUERY`` finds, as the
page's search box reads it, e.g. ``--open 'arm:react status:step_budget'``).

Uses the system Chromium (Debian's ``chromium`` package) through playwright, with every
network request refused: the page must need none.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from loopbench.harness.cli.report import report_command


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results folder written by loopbench run")
    parser.add_argument("--out", type=Path, default=Path("report-shots"), help="where to write")
    parser.add_argument("--vs", help="the arm to compare every arm against")
    parser.add_argument("--price-as", help="price the tokens as this model")
    parser.add_argument("--width", type=int, default=1400, help="viewport width in pixels")
    parser.add_argument("--open", default="failed:yes", help="search query of the run to open")
    args = parser.parse_args()
    try:
        from playwright.sync_api import Route, sync_playwright
    except ImportError:
        print("playwright is missing: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium is missing: apt-get install chromium (or make system)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    html = args.out / "report.html"
    options = [*(["--vs", args.vs] if args.vs else [])]
    options += ["--price-as", args.price_as] if args.price_as else []
    result = CliRunner().invoke(report_command, [str(args.results), *options, "-o", str(html)])
    if result.exit_code != 0:
        print(result.output, file=sys.stderr)
        return result.exit_code
    print(result.output.strip())
    url = html.resolve().as_uri()
    refused: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": args.width, "height": 900})

        def only_the_file(route: Route) -> None:
            if route.request.url == url:
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()

        page.route("**/*", only_the_file)
        page.on("console", lambda message: print(f"console {message.type}: {message.text}"))
        page.goto(url)
        page.screenshot(path=str(args.out / "report.png"), full_page=True)
        page.fill("#search", args.open)
        run = page.locator("#run-table tbody tr:visible").first
        if run.count():
            run.click()
            page.screenshot(path=str(args.out / "trace.png"))
        else:
            print(f"no run matches {args.open!r}; no trace.png", file=sys.stderr)
        browser.close()
    for request in refused:
        print(f"refused a network request: {request}", file=sys.stderr)
    print(f"wrote {args.out / 'report.png'} and {args.out / 'trace.png'}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
