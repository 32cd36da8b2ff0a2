"""`python -m bench.paired` through its entry point at tiny size: two real `orrery serve` processes
side by side, their windows alternating, and the paired table. Sanity of the numbers only; nothing
is timed. Both sides serve this checkout (forked from the test process's launcher)."""

from __future__ import annotations

import pytest

from bench import door, paired
from tests.conftest import DIALECTS


def test_paired_alternates_two_servers_and_reports_the_difference(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(door, "FORK_FOR_TESTS", True)
    here = str(paired.ROOT)
    argv = ["--before", here, "--after", here, "--dialect", DIALECTS[0], "--pairs", "2"]
    paired.main([*argv, "--sessions", "2", "--turns", "1"])
    out = capsys.readouterr().out
    windows = [line.split()[0] for line in out.splitlines() if "turns/s" in line and "|" not in line]
    assert windows == ["before", "after", "after", "before"]
    assert "model client offline / offline, errors 0 / 0" in out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    for label in ("server CPU ms/turn", "at 41.5 ms loop", "turns/s"):
        cells = [c.strip() for c in rows[label].strip("|").split("|")]
        assert float(cells[1]) > 0 and float(cells[2]) > 0
        assert "±" in cells[4]
    if DIALECTS[0] == "postgresql":  # the database's CPU too (SQLite's is the server's own)
        cells = [c.strip() for c in rows["PostgreSQL CPU ms/turn"].strip("|").split("|")]
        assert float(cells[1]) >= 0 and float(cells[2]) >= 0  # a few clock ticks at this size
    else:
        assert "PostgreSQL CPU ms/turn" not in rows
