"""A bounded schema fuzz of every operation with every schemathesis check (fixed seed and example
count): no 5xx, every response (status, content type, headers, body) matches the OpenAPI document,
valid data is accepted and invalid data refused, auth is enforced, undeclared methods answer 405 with
an `Allow` naming the path's methods. Two kinds of cases per operation: Hypothesis-generated valid and
invalid requests, and one coverage-phase case per scenario (wrong types, missing required parts,
boundary values, unsupported methods and content types)."""

from __future__ import annotations

from functools import cache
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.overrides import Override

from orrery.app.http import create_app
from orrery.config import Settings
from tests.api.live import LiveServer

EXAMPLES = 2
"""Generated examples per operation and mode (44 operations x 2 modes x 2), plus one coverage case per
scenario and operation (~350), keep both databases' runs near a minute of CPU together."""
load_all_checks()
CHECKS_RUN = CHECKS.get_all()
"""Every registered check. Three only act on what this stateless run never produces, and pass
through: `use_after_free` and `ensure_resource_availability` need a stateful run's recorded parent case
(create-read-delete is tested in tests/api/test_sessions_api.py), `object_level_authorization` needs
several configured identities (cross-user scoping is tested per door elsewhere)."""
NO_POSITIVE_ACCEPTANCE = {
    # `scoping` xor `compare`, 2-6 distinct strategy names: rules across query parameters
    "GET /v1/sessions/{session_id}/context",
    # the Vercel AI SDK's message schema (a third-party union); "a user message with text"
    "POST /v1/sessions/{session_id}/chat",
    # include/exclude come from backend/orrery/graph/templates.py, whose `older_than` format is unstated
    "POST /v1/context/build",
    # the *last* user message must have text (the document states that some user message exists);
    # n > 1 and the legacy functions are refused with a 400; so are a malformed reply schema, a tool
    # whose name clashes with a server tool and a tool result for a call that is not pending
    "POST /v1/chat/completions",
    # the same for `input`: a malformed `text.format`, a clash, a result for no pending call
    "POST /v1/responses",
    # the two ends must differ
    "POST /v1/edges",
    # the collection must be one of the project's, or a standard one (named in the refusal)
    "POST /v1/projects/{project_id}/kb/entries",
    "POST /v1/kb/relations",
}
"""Operations that answer 422 (OpenAI's routes: 400) to some schema-valid requests, for the reason
beside each: there, `positive_data_acceptance` is off; every other check still runs."""
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


def _check(case: Any, auth: dict[str, str], base_url: str | None, failures: list[str], label: str) -> None:
    response = case.call(base_url=base_url, headers={**(case.headers or {}), **auth}, timeout=60)
    checks = CHECKS_RUN
    if case.operation.label in NO_POSITIVE_ACCEPTANCE:
        checks = [c for c in checks if c.__name__ != "positive_data_acceptance"]
    try:
        case.validate_response(response, checks=checks, headers=auth)
    except FailureGroup as exc:  # collect every operation's failure, then report them all
        failures.append(f"{label} -> {response.status_code}: {exc}"[:1500])


DRAWN: dict[tuple[str, GenerationMode], list[Any]] = {}
"""The cases Hypothesis drew for each operation and mode, kept per test process: the other database's
run sends the same cases, its own ids in their paths, instead of drawing them again. The draw is seeded
and derandomized, so drawing again would give the same cases (~6 CPU-s a run)."""


def _fuzz(
    operation: Any,
    mode: GenerationMode,
    auth: dict[str, str],
    ids: dict[str, str],
    failures: list[str],
    root: str,
) -> None:
    names = {p.name for p in operation.iter_parameters() if p.location == "path"}
    known = {k: v for k, v in ids.items() if k in names} if mode is GenerationMode.POSITIVE else {}
    label = f"{operation.label} [{mode.value}]"
    if (operation.label, mode) in DRAWN:
        for case in DRAWN[operation.label, mode]:
            if known:
                case.path_parameters = {**case.path_parameters, **known}
            _check(case, auth, root, failures, label)  # drawn on the other run's schema: its own base URL
        return
    drawn = DRAWN.setdefault((operation.label, mode), [])

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
        drawn.append(case)
        _check(case, auth, None, failures, label)

    try:
        run()
    except Unsatisfiable:  # nothing to make invalid (an operation without parameters or body)
        assert mode is GenerationMode.NEGATIVE


@cache
def _coverage_cases() -> dict[str, list[Any]]:
    """One coverage-phase case per operation and scenario, drawn once per test process from the
    app's own document (the same for both databases); sent with each server's base URL."""
    schema = schemathesis.openapi.from_dict(create_app(Settings()).openapi())
    schema.config.generation.update(allow_x00=False)  # NUL is refused at every door (hostile tests)
    chosen: dict[str, list[Any]] = {}
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # the app's document is valid
        generation = schema.config.generation_for(operation=operation, phase="coverage")
        seen: set[str] = set()
        cases = chosen.setdefault(operation.label, [])
        generator = CoverageGenerator(
            operation=operation,
            generation_modes=MODES,
            generation_config=generation,
            auth_storage=None,
            override=Override(),
            feedback=FeedbackSources(),
        )
        for case in generator:
            scenario = str(getattr(case.meta.phase.data, "scenario", "")) if case.meta else ""
            if scenario not in seen:
                seen.add(scenario)
                cases.append(case)
    return chosen


def _cover(label: str, auth: dict[str, str], ids: dict[str, str], base: str, failures: list[str]) -> None:
    for case in _coverage_cases()[label]:
        if case.path_parameters and case.meta.generation.mode is GenerationMode.POSITIVE:
            case.path_parameters = {
                **case.path_parameters,
                **{k: v for k, v in ids.items() if k in case.path_parameters},
            }
        _check(case, auth, base, failures, f"{label} [coverage {case.meta.phase.data.scenario}]")


def test_schema_fuzz_finds_no_server_errors(live: LiveServer, demo: Any) -> None:
    root = live.base_url.removesuffix("/v1")
    schema = schemathesis.openapi.from_url(root + "/openapi.json")
    # a NUL is refused by the input rules every door applies (orrery.validation), though the document
    # cannot say so of each string; tests/api/test_hostile_doors.py plants it in every write instead
    schema.config.generation.update(allow_x00=False)
    auth = {"Authorization": f"Bearer {demo.api_key}"}
    created = httpx.post(f"{live.base_url}/sessions", json={"project_id": str(demo.project_id)}, headers=auth)
    ids = {
        "project_id": str(demo.project_id),
        "entity_id": str(demo.focus["task"]),
        "session_id": str(created.json()["id"]),
        "code": "BR-012",
    }
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 30
    for operation in operations:
        for mode in MODES:
            _fuzz(operation, mode, auth, ids, failures, root)
        _cover(operation.label, auth, ids, root, failures)
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures)
