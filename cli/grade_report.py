"""A grade report shown and written: the output `arena grade` and `arena grader submit` share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder.results import GradeReport
from cli.common import fail

console = Console(highlight=False)


def print_report(report: GradeReport) -> None:
    """Print each test's score and explanation, then the total and the summary."""
    table = Table(title=f"{report.profile} profile")
    table.add_column("test")
    table.add_column("score", justify="right")
    table.add_column("explanation")
    for test in report.tests:
        colour = "green" if test.score >= test.max_score else "yellow" if test.score else "red"
        table.add_row(
            escape(test.name),
            f"[{colour}]{test.score:g} / {test.max_score:g}[/]",
            escape(test.output),
        )
    console.print(table)
    console.print(f"[bold]total: {report.score:g} / {report.max_score:g}[/]")
    if report.output:
        console.print(escape(report.output))


def show_results(
    report: GradeReport,
    data: dict[str, Any],
    *,
    results: Path | None,
    html: Path | None,
    as_json: bool,
) -> None:
    """Write results.json `data` to `results` and `report` as HTML to `html` (each if given),
    then print `data` (`as_json`) or `report` as a table; exit 2 if a file cannot be written.

    `report` is what the reader may see of it (autograder.visibility.view).
    """
    from autograder.html import html_report

    try:
        if results is not None:
            results.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        if html is not None:
            html.write_text(html_report(report), encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {error.filename}: {error.strerror}")
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        print_report(report)
