"""`orrery serve --workers 2` forks its workers from a process that loaded what they only read (the
embedder, the encodings, the imports), so most of each worker's memory is shared with the others
rather than held twice (`orrery.services.warm`). A cold server (not forked from the test launcher),
PostgreSQL: several workers need it."""

from __future__ import annotations

import os
import time
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


def _until_both_warm(base: str) -> None:
    """Until 4 requests in a row answer 200: each worker has finished its start-up (the first 200
    came from one of them; the other may still answer 503 while it warms). 300 s is a bound on
    waiting, not a timing assertion."""
    in_a_row, deadline = 0, time.monotonic() + 300
    while in_a_row < 4:
        ok = httpx.get(f"{base}/health", timeout=30).status_code == 200
        in_a_row = in_a_row + 1 if ok else 0
        if not ok:
            assert time.monotonic() < deadline, "a worker never finished its start-up"
            time.sleep(0.2)


@pytest.mark.skipif("postgresql" not in DIALECTS, reason="several workers need PostgreSQL")
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_two_workers_share_what_they_only_read(db_url: str) -> None:
    settings = settings_for(db_url)
    with server_process(db_url, settings.secret_key, workers=2) as base:
        _until_both_warm(base)
        supervisor = STARTED[int(base.rsplit(":", 1)[1])]
        workers = _children(supervisor)
        command = Path(f"/proc/{supervisor}/cmdline").read_bytes()
        assert len(workers) == 2, [Path(f"/proc/{w}/cmdline").read_bytes()[:80] for w in workers]
        for worker in workers:
            assert Path(f"/proc/{worker}/cmdline").read_bytes() == command  # forked, not spawned
            memory = _memory(worker)
            private = memory["Private_Clean"] + memory["Private_Dirty"]
            assert private < memory["Rss"] / 2, memory  # spawned workers hold ~85% privately


def test_the_heap_s_free_pages_go_back_to_the_os() -> None:
    """Freed blocks between live ones stay in the process until `malloc_trim` hands their pages
    back (glibc, this test machine's libc); without it they would count as held."""
    from orrery.ops.heap import release_free_memory

    blocks = [bytes(4000) for _ in range(25_000)]  # ~100 MB of blocks malloc serves from its heap
    kept = blocks[::50]  # every 50th stays: the heap cannot shrink from its top
    del blocks
    freed = _memory(os.getpid())["Rss"]
    assert release_free_memory()
    assert _memory(os.getpid())["Rss"] < freed - 50_000  # kB: most of the freed ~100 MB
    assert len(kept) == 500


def test_workers_are_not_forked_from_a_process_whose_metrics_count_in_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """This test process imported prometheus_client without a metrics directory: forked workers
    would count where `/metrics` never reads, so the server starts fresh interpreters instead."""
    import prometheus_client.values

    from orrery.cli import server

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    assert not getattr(prometheus_client.values.ValueClass, "_multiprocess", False)
    assert not server._metrics_survive_fork()
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    assert server._metrics_survive_fork()
