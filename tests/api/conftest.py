"""Fixtures of the API tests that drive a real server: `live`, the app served on loopback with the
demo workspace loaded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from orrery.config import Settings
from tests.api.live import LiveServer, live_server


@pytest.fixture
def live(settings: Settings, demo: Any) -> Iterator[LiveServer]:
    with live_server(settings) as server:
        yield server
