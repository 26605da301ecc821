"""Fuzz the REST API from its own OpenAPI description (schemathesis) against a real server.

Every operation gets generated requests, valid and invalid, as a registered player: no answer
may be a 5xx, and every answer must be one the description documents, with the documented media
type, headers and body (an `ErrorResponse` for every error). Invalid requests must be refused.
Two checks are left out, for what a schema cannot say: `positive_data_acceptance` (a valid
body may still name a player or a match that does not exist: 422 or 404 is right) and
`ignored_auth` (a token is optional on the routes anyone may read).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import ignored_auth, positive_data_acceptance

from server.app import create_app
from server.settings import Settings
from tests.server.conftest import RunningServer, sqlite_server

REFUSALS = ["400", "401", "403", "404", "409", "413", "422", "429"]
"""The statuses that refuse a request: an invalid one must get one of them (413 included,
for a generated body over the body limit)."""

schema = schemathesis.openapi.from_dict(
    create_app(Settings()).openapi(),
    config=SchemathesisConfig.from_dict(
        {"checks": {"negative_data_rejection": {"expected-statuses": REFUSALS}}}
    ),
)


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with sqlite_server(tmp_path_factory.mktemp("fuzz")) as running:
        yield running


@pytest.fixture(scope="module")
def token(fuzzed_server: RunningServer) -> str:
    """The token of a registered player, sent with every generated request."""
    response = httpx.post(f"{fuzzed_server.url}/players", json={"name": "fuzzer"})
    assert response.status_code == 201, response.text
    value: str = response.json()["token"]
    return value


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(
    case: schemathesis.Case, fuzzed_server: RunningServer, token: str
) -> None:
    case.call_and_validate(
        base_url=fuzzed_server.url,
        headers={"Authorization": f"Bearer {token}"},
        excluded_checks=[positive_data_acceptance, ignored_auth],
    )
