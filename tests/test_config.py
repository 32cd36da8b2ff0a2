"""Settings: `.env.example` documents every field, URLs pick the dialect, production needs a secret."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from orrery.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def _env_name(field: str) -> str:
    alias = Settings.model_fields[field].validation_alias
    choices = getattr(alias, "choices", None)
    return str(choices[0]) if choices else f"ORRERY_{field.upper()}"


def test_env_example_lists_every_setting() -> None:
    documented = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert {_env_name(f) for f in Settings.model_fields} <= documented


def test_defaults_and_dialects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert Settings(_env_file=None).dialect == "sqlite"  # type: ignore[call-arg]
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://u@127.0.0.1/db")
    assert Settings(_env_file=None).dialect == "postgresql"  # type: ignore[call-arg]


def test_production_refuses_placeholder_secret() -> None:
    with pytest.raises(ValidationError, match="ORRERY_SECRET_KEY"):
        Settings(_env_file=None, env="production")  # type: ignore[call-arg]
    assert Settings(_env_file=None, env="production", secret_key="s3cr3t").env == "production"  # type: ignore[call-arg]
