"""Print a grade report as a table: the shared view of `arena grade` and `arena grader submit`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from autograder.results import GradeReport

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
