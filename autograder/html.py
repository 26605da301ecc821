"""A grade report in HTML: the report's body, and one self-contained page around it.

`report_body` is the report alone (escaped, no style and no script): the server shows it inside
its own pages, styled by its static sheet (server/web/static/report.css), under a
Content-Security-Policy that refuses inline styles. `html_report` is a page on its own for a
file on disk (the command line's `--html`), its style inline since no server stands behind it.
"""

from __future__ import annotations

from html import escape

from autograder.results import GradeReport, TestResult, Visibility

VISIBILITY_WORDS: dict[Visibility, str] = {
    "visible": "public",
    "after_published": "private",
    "after_due_date": "private until the due date",
    "hidden": "hidden from students",
}
"""A test's visibility (Gradescope's label) as a reader says it."""

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; }
h1 { margin-bottom: 0.2rem; }
.total { font-size: 1.4rem; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1.5rem; }
th, td { text-align: left; padding: 0.3rem 0.6rem; border-bottom: 1px solid #ddd; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
section { border: 1px solid #ddd; border-left-width: 6px; border-radius: 4px; padding: 0.4rem 1rem;
          margin: 0.8rem 0; }
section.full { border-left-color: #2e7d32; }
section.partial { border-left-color: #f9a825; }
section.zero { border-left-color: #c62828; }
section h3 { font-size: 1.05rem; margin: 0.4rem 0; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 0.6rem; border-radius: 4px; }
.muted { color: #666; font-size: 0.9rem; }
"""


def report_body(report: GradeReport) -> str:
    """Return the report as an HTML fragment: the total, a table of tests, each explanation.

    Every text from the submission or the grader is escaped, so the fragment is safe to serve.
    Its one root is `<div class="grade-report">`; each test is a `<section>` headed `<h3>`.
    """
    rows = "\n".join(
        f'<tr><td><a href="#test-{index}">{escape(test.name)}</a></td>'
        f'<td class="num">{_points(test.score)} / {_points(test.max_score)}</td>'
        f"<td>{escape(VISIBILITY_WORDS[test.visibility])}</td></tr>"
        for index, test in enumerate(report.tests, 1)
    )
    sections = "\n".join(_section(index, test) for index, test in enumerate(report.tests, 1))
    summary = f'<p class="summary">{escape(report.output)}</p>' if report.output else ""
    return f"""<div class="grade-report">
<p class="muted">profile: {escape(report.profile)}</p>
<p class="total">Score: <strong>{_points(report.score)}</strong> of \
{_points(report.max_score)}</p>
{summary}
<div class="scroll">
<table>
<thead><tr><th scope="col">test</th><th scope="col">score</th>\
<th scope="col">kind</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</div>
{sections}
</div>"""


def html_report(report: GradeReport) -> str:
    """Return the report as a page of its own, its style inline (for a file on disk).

    Every text from the submission or the grader is escaped, so the page is safe to open.
    """
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Arena grade: {escape(report.profile)} {_points(report.score)} / \
{_points(report.max_score)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>Arena autograder</h1>
{report_body(report)}
</body>
</html>
"""


def _section(index: int, test: TestResult) -> str:
    if test.score >= test.max_score:
        kind = "full"
    elif test.score > 0:
        kind = "partial"
    else:
        kind = "zero"
    body = f"<pre>{escape(test.output)}</pre>" if test.output else ""
    return (
        f'<section id="test-{index}" class="{kind}">'
        f"<h3>{escape(test.name)}: {_points(test.score)} / {_points(test.max_score)}</h3>"
        f"{body}</section>"
    )


def _points(value: float) -> str:
    return f"{round(value, 4):g}"
