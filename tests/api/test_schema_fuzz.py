"""A bounded schema fuzz of every operation (schemathesis, fixed seed and example count): no 5xx, and
every response matches the OpenAPI document, for generated valid and invalid requests alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from backend.config import Settings
from tests.api.live import LiveServer, live_server

EXAMPLES = 6
"""Examples per operation and mode: 35 operations x 2 modes x 6 keeps the run under a minute."""
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance]


@pytest.fixture
def live(settings: Settings, demo: Any) -> Iterator[LiveServer]:
    with live_server(settings) as server:
        yield server


def _fuzz(
    operation: Any, mode: GenerationMode, auth: dict[str, str], ids: dict[str, str], failures: list[str]
) -> None:
    names = {p.name for p in operation.iter_parameters() if p.location == "path"}
    known = {k: v for k, v in ids.items() if k in names} if mode is GenerationMode.POSITIVE else {}

    @seed(20261122)
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(mode, path_parameters=known or None))
    def run(case: Any) -> None:
        response = case.call(headers={**(case.headers or {}), **auth}, timeout=60)
        try:
            case.validate_response(response, checks=CHECKS)
        except Exception as exc:  # collect every operation's failure, then report them all
            failures.append(f"{operation.label} [{mode.value}] -> {response.status_code}: {exc}"[:1500])

    try:
        run()
    except Unsatisfiable:  # nothing to make invalid (an operation without parameters or body)
        assert mode is GenerationMode.NEGATIVE


def test_schema_fuzz_finds_no_server_errors(live: LiveServer, demo: Any) -> None:
    schema = schemathesis.openapi.from_url(live.base_url.removesuffix("/v1") + "/openapi.json")
    auth = {"Authorization": f"Bearer {demo.api_key}"}
    created = httpx.post(f"{live.base_url}/sessions", json={"project_id": str(demo.project_id)}, headers=auth)
    ids = {
        "project_id": str(demo.project_id),
        "entity_id": str(demo.focus["task"]),
        "session_id": str(created.json()["id"]),
        "code": "BR-012",
    }
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz(operation, mode, auth, ids, failures)
    assert not failures, "\n\n".join(failures)
