"""The grader's pages and the form's routes over HTTP: who may upload and see a job, as a matrix
of anonymous browser / the guest who uploaded / another guest / a form from another site."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest

from protocol.messages import GradingProfiles
from server.settings import Settings
from server.web.pages import CONTENT_SECURITY_POLICY
from tests.server.conftest import RunningServer, start_server
from tests.server.grading.test_grading import grading_settings, wait_done, zipped

HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
FAILING = b"import sys\nsys.exit(3)\n"
"""A checkers.py failing every puzzle at once: the quickest real grading."""


@pytest.fixture
def grader_server(server_settings: Settings) -> Iterator[RunningServer]:
    running = start_server(grading_settings(server_settings, rate_uploads_per_address="8/day"))
    try:
        yield running
    finally:
        running.stop()


def form_upload(
    client: httpx.Client, profile: str, files: dict[str, bytes], **headers: str
) -> httpx.Response:
    """Post the grader page's form as a browser does (multipart), from the server's own page."""
    return client.post(
        "/web/grader/jobs",
        data={"profile": profile},
        files=[("files", (name, data, "text/x-python")) for name, data in files.items()],
        headers={"Origin": str(client.base_url).rstrip("/"), **HTML, **headers},
    )


def test_the_grader_page_shows_the_profiles_and_the_form_and_programs_get_json(
    grader_server: RunningServer,
) -> None:
    with httpx.Client(base_url=grader_server.url, timeout=30) as client:
        page = client.get("/grader", headers=HTML)
        assert page.status_code == 200
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert 'action="/web/grader/jobs"' in page.text
        assert 'enctype="multipart/form-data"' in page.text
        assert 'name="files"' in page.text and "multiple" in page.text
        for name, main in (("endgame", "checkers.py"), ("agent", "agent.py")):
            assert f'value="{name}"' in page.text and f"<code>{main}</code>" in page.text
        assert '<a href="/grader" aria-current="page">Grader</a>' in page.text
        # A program asking the same URL gets the profiles, as from /grader/profiles.
        profiles = GradingProfiles.model_validate_json(client.get("/grader").text)
        assert profiles == GradingProfiles.model_validate_json(client.get("/grader/profiles").text)


def test_who_may_upload_and_see_a_job(grader_server: RunningServer) -> None:
    url = grader_server.url
    with (
        httpx.Client(base_url=url, timeout=30) as uploader,
        httpx.Client(base_url=url, timeout=30) as other,
        httpx.Client(base_url=url, timeout=30) as anonymous,
    ):
        # A form from another site's page is refused before anything is made or queued.
        foreign = form_upload(
            uploader, "endgame", {"checkers.py": FAILING}, Origin="https://evil.example"
        )
        assert foreign.status_code == 403 and foreign.json()["code"] == "FORBIDDEN"
        assert "set-cookie" not in foreign.headers and "arena_guest" not in uploader.cookies

        # A browser without a guest gets one with its upload, and goes to the job's page.
        sent = form_upload(uploader, "endgame", {"checkers.py": FAILING})
        assert sent.status_code == 303, sent.text
        job_path = sent.headers["location"]
        assert re.fullmatch(r"/grader/jobs/[A-Za-z0-9_\-]+", job_path)
        cookie = sent.headers["set-cookie"].lower()
        assert cookie.startswith("arena_guest=arena_")
        assert "httponly" in cookie and "samesite=strict" in cookie
        guest_token = uploader.cookies["arena_guest"]
        job_id = job_path.rsplit("/", 1)[1]

        # A second upload keeps the guest (no new cookie).
        again = form_upload(uploader, "endgame", {"checkers.py": FAILING})
        assert again.status_code == 303 and "set-cookie" not in again.headers

        # The other browser gets a guest of its own with its own upload.
        assert form_upload(other, "endgame", {"checkers.py": FAILING}).status_code == 303
        assert other.cookies["arena_guest"] != guest_token

        # The uploader sees the job's page; the others a refusal page, never the job.
        page = uploader.get(job_path, headers=HTML)
        assert page.status_code == 200, page.text
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert job_id in page.text and "<code>checkers.py</code>" in page.text
        for stranger in (other, anonymous):
            refused = stranger.get(job_path, headers=HTML)
            assert refused.status_code == 403 and refused.headers["content-type"].startswith(
                "text/html"
            )
            assert "Not yours" in refused.text and "checkers.py" not in refused.text
        missing = uploader.get("/grader/jobs/nosuchjob", headers=HTML)
        assert missing.status_code == 404 and "grading job nosuchjob" in missing.text

        # The status the page's script follows, the job's JSON: the uploader's cookie or token.
        assert other.get(job_path).status_code == 403
        assert anonymous.get(job_path).status_code == 401
        assert uploader.get(job_path).json()["job_id"] == job_id
        bearer = {"Authorization": f"Bearer {guest_token}"}
        assert anonymous.get(job_path, headers=bearer).json()["job_id"] == job_id

        # Before it is finished, a browser asking for the report is sent to the job's page.
        report_path = f"{job_path}/report.html"
        job = wait_done(uploader, job_id)
        assert job.status == "done" and job.score == 0 and job.max_score

        finished = uploader.get(job_path, headers=HTML)
        assert 'id="report"' in finished.text and "grade-report" in finished.text
        assert 'src="/static/grader_job.js"' not in finished.text  # nothing left to follow
        report = uploader.get(report_path, headers=HTML)
        assert report.status_code == 200
        assert report.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "<style" not in report.text and 'href="/static/report.css"' in report.text
        assert f"Score: <strong>0</strong> of {job.max_score:g}" in report.text
        # A program reads it with the token, under the same policy.
        by_token = anonymous.get(report_path, headers=bearer)
        assert by_token.status_code == 200
        assert by_token.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        for stranger in (other, anonymous):
            assert stranger.get(report_path, headers=HTML).status_code == 403
            assert stranger.get(report_path).json()["code"] in ("FORBIDDEN", "UNAUTHORIZED")


def test_a_browser_is_sent_to_the_job_page_until_the_report_is_ready(
    grader_server: RunningServer,
) -> None:
    slow = b"import time, sys\ntime.sleep(3)\nsys.exit(1)\n"
    with httpx.Client(base_url=grader_server.url, timeout=30) as client:
        sent = form_upload(client, "endgame", {"checkers.py": slow})
        job_path = sent.headers["location"]
        early = client.get(f"{job_path}/report.html", headers=HTML)
        assert early.status_code == 303 and early.headers["location"] == job_path
        # A program is told why, as before.
        bearer = {"Authorization": f"Bearer {client.cookies['arena_guest']}"}
        refused = client.get(f"{job_path}/report.html", headers=bearer)
        assert refused.status_code == 409 and refused.json()["code"] == "JOB_NOT_FINISHED"
        page = client.get(job_path, headers=HTML)
        assert 'role="status"' in page.text and 'src="/static/grader_job.js"' in page.text
        assert f'data-source="{job_path}"' in page.text


def test_a_bad_upload_comes_back_in_the_form_saying_what_was_wrong(
    server_settings: Settings,
) -> None:
    settings = grading_settings(
        server_settings,
        grader_max_upload_bytes=4096,
        rate_uploads_per_address="6/day",
        rate_registrations_per_address="1/day",
    )
    running = start_server(settings)
    try:
        with (
            httpx.Client(base_url=running.url, timeout=30) as client,
            httpx.Client(base_url=running.url, timeout=30) as second,
        ):
            cases = [
                ("<b>chess</b>", {"checkers.py": FAILING}, "unknown profile"),
                ("agent", {"checkers.py": FAILING}, "agent.py"),
                ("endgame", {"notes.txt": b"hello"}, "checkers.py"),
                ("endgame", {"checkers.py": b"#" * 5000}, "4096 bytes"),
            ]
            for index, (profile, files, reason) in enumerate(cases):
                answer = form_upload(client, profile, files)
                assert answer.status_code == 422, answer.text
                assert answer.headers["content-type"].startswith("text/html")
                assert 'role="alert"' in answer.text and reason in answer.text
                assert "<b>chess</b>" not in answer.text
                if index == 0:
                    # The guest was made at the first post (and is kept through refusals):
                    # a registration, of which this address has no more today.
                    assert client.cookies["arena_guest"].startswith("arena_")
                    registering = form_upload(second, "endgame", {"checkers.py": FAILING})
                    assert registering.status_code == 429, registering.text
                    assert "registrations" in registering.json()["message"]
                    assert "arena_guest" not in second.cookies
            # A file input left empty sends a part without a name or a byte.
            empty = client.post(
                "/web/grader/jobs",
                data={"profile": "endgame"},
                files={"files": ("", b"", "application/octet-stream")},
            )
            assert empty.status_code == 422 and "choose the files" in empty.text
            # A body far past the limit is cut off before it is read, and answered with the
            # form (before the rate limits: it is not counted).
            huge = form_upload(
                client, "endgame", {"work.zip": zipped({"checkers.py": b"#" * 200_000})}
            )
            assert huge.status_code == 422 and "at most 4096 bytes" in huge.text
            # The form counts in the uploads per address, as POST /grader/jobs does (6 here,
            # the refused ones and the other browser's included).
            limited = form_upload(client, "endgame", {"checkers.py": FAILING})
            assert limited.status_code == 429, limited.text
            assert "grader uploads" in limited.json()["message"]
    finally:
        running.stop()


def test_the_form_meets_the_same_queue_limit_as_rest(server_settings: Settings) -> None:
    slow = b"import sys, time\ntime.sleep(1)\nsys.exit(1)\n"
    running = start_server(grading_settings(server_settings, grader_max_queued=1))
    try:
        with httpx.Client(base_url=running.url, timeout=30) as client:
            first = form_upload(client, "endgame", {"checkers.py": slow})
            assert first.status_code == 303, first.text
            bearer = {"Authorization": f"Bearer {client.cookies['arena_guest']}"}
            job_url, deadline = first.headers["location"], time.monotonic() + 30
            while client.get(job_url, headers=bearer).json()["status"] == "queued":
                assert time.monotonic() < deadline, "the first job never ran"
                time.sleep(0.05)
            # The worker is busy: one more waits, the queue's limit; the next is refused.
            assert form_upload(client, "endgame", {"checkers.py": slow}).status_code == 303
            full = form_upload(client, "endgame", {"checkers.py": slow})
            assert full.status_code == 422, full.text
            assert "1 submissions are waiting to be graded" in full.text
            rest = client.post(
                "/grader/jobs",
                data={"profile": "endgame"},
                files={"files": ("checkers.py", slow)},
                headers=bearer,
            )
            assert rest.status_code == 503 and rest.json()["code"] == "QUEUE_FULL"
    finally:
        running.stop()
