"""A wrong provider key reads as what it is, and a failing provider costs a bounded number of calls.

A live `orrery serve` (its own process) reaches a fake OpenAI-compatible provider on loopback
(`ORRERY_MODEL=openai/...`, `OPENAI_API_BASE`) through its direct OpenAI client or, with
`ORRERY_MODEL_CLIENT=litellm`, through litellm, and the real `openai` SDK calls the server with
its default retries. The provider answers 401: the client reads which variable to set, gets 502 with
`x-should-retry: false`, and the provider saw one request; the server logged one line at start (the
key is present) and one line for the failure, with no traceback and no litellm banner. The provider
then fails with 500: one SDK call makes at most 3 upstream requests (Orrery's 1 + 2 retries; the SDK,
told not to retry, makes one). `orrery chat` without the key says so at start and fails in one line.
SQLite only: nothing here depends on the database.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.conftest import settings_for
from tests.support.entrypoint import server_launcher
from tests.support.killable import killable_server, load_demo_into
from tests.support.upstream import FakeProvider, fake_provider

MODEL = "openai/fake-model"


@pytest.fixture
def provider() -> Iterator[tuple[FakeProvider, str]]:
    with fake_provider() as found:
        yield found


@pytest.mark.parametrize("client", ["auto", "litellm"])
async def test_a_refused_key_says_what_to_set_and_is_not_retried(
    sqlite_demo_template: Path, tmp_path: Path, provider: tuple[FakeProvider, str], client: str
) -> None:
    fake, base = provider
    shutil.copy(sqlite_demo_template, tmp_path / "orrery.db")
    settings = settings_for(f"sqlite+aiosqlite:///{tmp_path / 'orrery.db'}")
    demo = await load_demo_into(settings)
    env = {
        "ORRERY_MODEL": MODEL,
        "OPENAI_API_BASE": base,
        "OPENAI_API_KEY": "sk-wrong",
        "LITELLM_API_BASE": "",
        "ORRERY_MODEL_TIMEOUT_SECONDS": "120",
        "ORRERY_LOG_LEVEL": "info",  # the start-up line about the key is INFO when it is present
        "ORRERY_MODEL_CLIENT": client,  # Orrery's direct OpenAI client, or litellm
    }
    fake.mode = "unauthorized"
    with killable_server(settings.database_url, settings.secret_key, env) as server:
        client = openai.AsyncOpenAI(base_url=f"{server.base}/v1", api_key=demo.api_key)  # 2 retries
        question = [{"role": "user", "content": "Hello?"}]
        with pytest.raises(openai.APIStatusError) as refused:
            await client.chat.completions.create(model="orrery/coach", messages=question)  # type: ignore[arg-type]
        assert refused.value.status_code == 502
        assert refused.value.response.headers["x-should-retry"] == "false"
        assert "the provider refused the credentials: set OPENAI_API_KEY" in refused.value.message
        assert len(fake.requests) == 1  # neither litellm nor the SDK retried a refused key

        # the session API: the same words, and `retry: false` (the web app then offers no Retry)
        async with httpx.AsyncClient(
            base_url=server.base, headers={"Authorization": f"Bearer {demo.api_key}"}
        ) as http:
            sid = (await http.post("/v1/sessions", json={"project_id": str(demo.project_id)})).json()["id"]
            failed = await http.post(
                f"/v1/sessions/{sid}/messages",
                json={"content": "Hello again"},
                headers={"Accept": "application/json"},
            )
        assert failed.status_code == 502 and failed.headers["x-should-retry"] == "false"
        error = failed.json()["error"]
        assert error["message"] == "the provider refused the credentials: set OPENAI_API_KEY"
        assert error["details"] == {"retry": False, "code": "model_auth"}

        fake.mode, fake.requests[:] = "fail", []
        with pytest.raises(openai.InternalServerError) as outage:
            await client.chat.completions.create(model="orrery/coach", messages=question)  # type: ignore[arg-type]
        assert outage.value.response.headers["x-should-retry"] == "false"
        assert len(fake.requests) == 3  # Orrery's 1 + 2 retries; the SDK did not multiply them
        await client.close()
        log = server.log.read_text()
    assert f"model {MODEL}: credentials present" in log
    assert "turn failed: ProviderCredentialsError: the provider refused the credentials" in log
    assert "Give Feedback" not in log and "LiteLLM.Info" not in log
    refusals = log[: log.index("InternalServerError")] if "InternalServerError" in log else log
    assert "Traceback" not in refusals, log


def test_orrery_chat_without_the_key_says_so_in_one_line(sqlite_demo_template: Path, tmp_path: Path) -> None:
    """`orrery chat` checks the configured model's key at start; the failed turn is one log line and
    the error (no retry advice: it would fail the same way) on stderr; nothing (no litellm banner,
    no traceback) reaches stdout."""
    shutil.copy(sqlite_demo_template, tmp_path / "orrery.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL", "OPENAI_"))}
    env |= {
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'orrery.db'}",
        "ORRERY_SECRET_KEY": "test-secret",
        "ORRERY_MODEL": "openai/gpt-4o-mini",
        "HTTPS_PROXY": "http://127.0.0.1:9",  # no network: nothing may try it
    }
    code, stdout, stderr = server_launcher().run_split(
        ["chat", "--demo", "--once", "Hello"], environ=env, cwd=tmp_path
    )
    assert (code, stdout) == (1, "")
    assert stderr.splitlines() == [
        "warning: model openai/gpt-4o-mini: OPENAI_API_KEY not set, so its turns will fail "
        "(set it, or ORRERY_MODEL=offline)",
        "turn failed: ProviderCredentialsError: the model provider needs credentials: set OPENAI_API_KEY",
        "error: the model failed: the model provider needs credentials: set OPENAI_API_KEY",
    ]
