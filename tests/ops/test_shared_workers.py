"""`orrery serve --workers 2` forks its workers from a process that loaded what they only read (the
embedder, the encodings, the imports), so most of each worker's memory is shared with the others
rather than held twice (`orrery.services.warm`). A cold server (not forked from the test launcher),
PostgreSQL: several workers need it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import DIALECTS, settings_for
from tests.support.load import STARTED, server_process


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _memory(pid: int) -> dict[str, int]:
    """kB by smaps_rollup field."""
    lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    return {line.split(":")[0]: int(line.split(":")[1].split()[0]) for line in lines}


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="several workers need PostgreSQL")
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_two_workers_share_what_they_only_read(db_url: str) -> None:
    settings = settings_for(db_url)
    with server_process(db_url, settings.secret_key, workers=2) as base:
        for _ in range(4):  # requests reach the workers; each has finished its start-up
            assert httpx.get(f"{base}/health", timeout=30).status_code == 200
        supervisor = STARTED[int(base.rsplit(":", 1)[1])]
        workers = _children(supervisor)
        command = Path(f"/proc/{supervisor}/cmdline").read_bytes()
        assert len(workers) == 2
        for worker in workers:
            assert Path(f"/proc/{worker}/cmdline").read_bytes() == command  # forked, not spawned
            memory = _memory(worker)
            private = memory["Private_Clean"] + memory["Private_Dirty"]
            assert private < memory["Rss"] / 2, memory  # spawned workers hold ~85% privately
