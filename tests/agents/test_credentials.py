"""The credentials of a directly called provider (`openai/...`) answer from a small table, the same
as litellm's `validate_environment` (with or without a base URL, the key set, empty or unset),
without importing litellm; every other provider still asks litellm."""

from __future__ import annotations

import subprocess
import sys

import litellm
import pytest

from orrery.agents.credentials import (
    ProviderCredentialsError,
    credential_names,
    credentials_report,
    missing_credentials,
    refused,
)
from orrery.config import Settings

MODELS = ["openai/gpt-4o-mini", "openai/gpt-4.1", "openai/o3", "openai/my-local-model"]
ENVIRONMENTS = [
    {},
    {"OPENAI_API_KEY": "sk-test"},
    {"OPENAI_API_KEY": ""},
    {"OPENAI_API_BASE": "http://127.0.0.1:9/v1"},
    {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test"},
]
VARIABLES = ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL")


def _litellm_missing(model: str) -> list[str]:
    """What the litellm-only code answered: the secret variables it lists as missing."""
    missing = litellm.validate_environment(model)["missing_keys"]
    return [n for n in missing if any(w in n for w in ("KEY", "SECRET", "TOKEN"))]


class Refusal(Exception):
    status_code = 401


@pytest.mark.parametrize("environment", ENVIRONMENTS, ids=lambda e: ",".join(e) or "none")
@pytest.mark.parametrize("model", MODELS)
def test_openai_credentials_answer_as_litellm(
    model: str, environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    litellm.suppress_debug_info = True
    expected = _litellm_missing(model)
    assert missing_credentials(model) == expected
    provider = litellm.get_llm_provider(model)[1]
    assert credential_names(model) == (expected or [f"{str(provider).upper()}_API_KEY"])
    failure = refused(RuntimeError("boom"), model)
    assert (failure is not None) == bool(expected)
    assert isinstance(refused(Refusal(), model), ProviderCredentialsError)
    report = credentials_report(Settings(_env_file=None, model=model))  # type: ignore[call-arg]
    assert report is not None and report[0] == (not expected)


def test_other_providers_still_ask_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert missing_credentials("anthropic/claude-sonnet-4-5") == ["ANTHROPIC_API_KEY"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    assert missing_credentials("anthropic/claude-sonnet-4-5") == []
    assert credential_names("anthropic/claude-sonnet-4-5") == ["ANTHROPIC_API_KEY"]


def test_an_openai_model_s_credentials_import_no_litellm() -> None:
    script = (
        "import os, sys; os.environ.pop('OPENAI_API_KEY', None)\n"
        "from orrery.agents.credentials import credentials_report, refused, credential_names\n"
        "from orrery.config import Settings\n"
        "report = credentials_report(Settings(_env_file=None, model='openai/gpt-4o-mini'))\n"
        "failure = refused(RuntimeError(), 'openai/x')\n"
        "print(report[0], credential_names('openai/gpt-4o-mini'), failure is not None)\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["False ['OPENAI_API_KEY'] True", "False"], out.stdout + out.stderr
