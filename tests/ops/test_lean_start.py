"""A server whose model is called directly (`openai/...` at an OpenAI-compatible base URL) starts
without importing litellm: a cold `orrery serve` process (not forked from the test launcher, which
preloads litellm) runs its whole start-up — credentials line, provider preload, encodings, embedder
— answers `/health`, and Python's own import log (`PYTHONPROFILEIMPORTTIME`) names no litellm module
and not the openai SDK's client (the direct client posts with aiohttp). SQLite only: nothing here
depends on the database."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import settings_for
from tests.support.killable import cli
from tests.support.load import ROOT, _child_env, _wait_healthy, free_port
from tests.support.upstream import fake_provider


@pytest.fixture
def provider_base() -> Iterator[str]:
    with fake_provider() as (_, base):
        yield base


def _imported(log: str) -> set[str]:
    """The modules an import-time log names (`import time: self | cumulative | name`)."""
    return {line.rsplit("|", 1)[1].strip() for line in log.splitlines() if line.startswith("import time:")}


def test_a_direct_model_s_server_starts_without_litellm(
    sqlite_demo_template: Path, tmp_path: Path, provider_base: str
) -> None:
    shutil.copy(sqlite_demo_template, tmp_path / "orrery.db")
    settings = settings_for(f"sqlite+aiosqlite:///{tmp_path / 'orrery.db'}")
    env = {
        "ORRERY_MODEL": "openai/fake-model",
        "OPENAI_API_BASE": provider_base,
        "OPENAI_BASE_URL": provider_base,
        "OPENAI_API_KEY": "sk-test",
        "LITELLM_API_BASE": "",
        "ORRERY_LOG_LEVEL": "info",
        "PYTHONPROFILEIMPORTTIME": "1",
    }
    port = free_port()
    with tempfile.TemporaryDirectory() as cwd:
        log_path = Path(cwd) / "server.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                cli("serve", "--host", "127.0.0.1", "--port", str(port)),
                env=_child_env(settings.database_url, settings.secret_key, ROOT, env),
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_healthy(proc, f"http://127.0.0.1:{port}", log_path)  # 200: start-up finished
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        text = log_path.read_text()
    imported = _imported(text)
    assert "aiohttp" in imported and "tiktoken" in imported, text[-2000:]
    assert "openai.resources.chat.completions" not in imported
    assert not {m for m in imported if m == "litellm" or m.startswith("litellm.")}
    assert "model openai/fake-model: credentials present" in text
