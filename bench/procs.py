"""Processes a benchmark measures from outside, from /proc (Linux): a process tree's CPU time, its
memory, and what it has loaded."""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def parents() -> dict[int, tuple[int, list[bytes]]]:
    """Every process now: pid -> (parent pid, command line arguments)."""
    found: dict[int, tuple[int, list[bytes]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        found[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), args)
    return found


def tree(root: int, table: dict[int, tuple[int, list[bytes]]]) -> list[int]:
    """`root` and all its descendants in `table`."""
    found, frontier = [root], [root]
    while frontier:
        children = [pid for pid, (ppid, _) in table.items() if ppid in frontier]
        found += children
        frontier = children
    return found


def postgres_pids(port: int) -> list[int]:
    """The PostgreSQL server listening on `port` (the postmaster started with `-p PORT`) and its
    backends; empty when there is none."""
    table = parents()
    for pid, (_, args) in table.items():
        names = [a.rsplit(b"/", 1)[-1] for a in args[:1]]
        if names == [b"postgres"] and b"-p" in args and str(port).encode() in args:
            return tree(pid, table)
    return []


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of these processes (each one's own, not its reaped children's), in seconds;
    a process that ended is not counted."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted from 1
    return total / CLOCK_TICKS


def postgres_cpu_seconds(port: int) -> float:
    """The CPU so far of the PostgreSQL server on `port`: its live processes', plus its postmaster's
    cutime + cstime, what the backends that ended spent (the postmaster reaps them). Without the
    latter, a window in which a pool closed connections beyond its size read too little, even
    below 0."""
    pids = postgres_pids(port)
    if not pids:
        return 0.0
    try:
        fields = Path(f"/proc/{pids[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return cpu_seconds(pids)
    return cpu_seconds(pids) + (int(fields[13]) + int(fields[14])) / CLOCK_TICKS  # fields 16, 17 of proc(5)


def _kb(pid: int, field: str, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_mb(pids: list[int]) -> tuple[float, float]:
    """(RSS, PSS) of these processes, MB: PSS counts a page shared by n processes 1/n, so workers
    sharing libraries add up to what they hold together."""
    rss = sum(_kb(p, "VmRSS", "status") for p in pids)
    pss = sum(_kb(p, "Pss", "smaps_rollup") for p in pids)
    return rss / 1024, pss / 1024


def maps_library(pids: list[int], name: str) -> bool:
    """Whether any of these processes has a shared library whose path holds `name` mapped: a module
    with a native extension of its own shows that it was imported."""
    for pid in pids:
        try:
            if name in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            continue
    return False
