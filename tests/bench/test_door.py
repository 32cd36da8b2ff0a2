"""The door benchmark's whole code path at tiny size, through its real entry point: a real `orrery
serve` (2 workers on PostgreSQL, so the workers' CPU and metrics are added up), streamed turns over
HTTP, CPU from /proc and SQL counted in the server. Sanity of the numbers only; nothing is timed. The
server and the database's commands are forked from the test process's launcher (`door.FORK_FOR_TESTS`);
the workers it starts are spawned cold, as always."""

from __future__ import annotations

import pytest

from bench import common, door, door_report, profiling
from tests.conftest import DIALECTS


def _rows(output: str) -> list[dict[str, str]]:
    """The final markdown table as dicts, header cells as keys."""
    table = output.rsplit("\n\n", 1)[1].strip().splitlines()
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    return [
        dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True)) for line in table[2:]
    ]


def _spread(cell: str) -> tuple[float, float, float]:
    """`18.1 (16.0–19.6)` -> (18.1, 16.0, 19.6)."""
    median, _, rest = cell.partition(" (")
    low, _, high = rest.rstrip(")").partition("–")
    return float(median), float(low), float(high)


def test_median_window_is_the_middle_cpu_and_spans_the_rest() -> None:
    def window(cpu: float, elapsed: float) -> door_report.Window:
        turns = [door_report.Turn(latency=0.1)] * 10
        return door_report.Window(turns=turns, elapsed=elapsed, cpu_seconds=cpu)

    windows = [window(0.3, 1.0), window(0.1, 2.0), window(0.2, 0.5)]  # 10, 5, 20 turns/s
    chosen, cpu, rate = door_report.median_window(windows)
    assert chosen is windows[2]
    assert (cpu, rate) == (" (10.0–30.0)", "10.0 (5.0–20.0)")  # turns/s: its own median
    assert door_report.median_window(windows[:1]) == (windows[0], "", "10.0")


def test_reference_loop_is_fixed_work_and_normalises_to_the_reference_speed() -> None:
    assert common.reference_loop(1000) == common.reference_loop(1000)  # the same work every time
    times = common.loop_ms(3)
    assert len(times) == 3 and times == sorted(times) and times[0] > 0
    assert common.normalised(30.0, 83.0) == 30.0 * 41.5 / 83.0  # a machine half as fast: half the CPU
    assert common.normalised(30.0, common.REFERENCE_LOOP_MS) == 30.0


@pytest.mark.parametrize("dialect", DIALECTS)
def test_door_reports_sane_numbers(
    dialect: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(door, "FORK_FOR_TESTS", True)  # the commands and the server forked, not cold
    argv = ["--dialect", dialect, "--workers", "2", "--sessions", "2", "--turns", "2", "--quiet-turns", "2"]
    repeat = 2 if dialect == "sqlite" else 1  # two servers in turn (the cheaper dialect's start-up)
    door.main([*argv, "--long", "3", "--repeat", str(repeat)])
    out = capsys.readouterr().out
    rows = _rows(out)
    assert [r["sessions x turns"] for r in rows] == ["2 x 2", "1 x 2", "1 x 2 after 4"]
    assert f"after {2 * 3 + 3 + 6} turns" in out  # warm-ups, the passes, the long session's history
    for column in ("CPU ms/turn", "turns/s"):  # repeated: the median, then the range
        if repeat > 1:
            median, low, high = _spread(rows[0][column])
            assert 0 < low <= median <= high
            rows[0][column] = str(median)
    for row in rows:
        assert row["engine"] == dialect
        assert row["workers"] == ("2" if dialect == "postgresql" else "1")
        assert row["errors"] == "0"
        assert float(row["CPU ms/turn"]) > 0
        assert row["client"] == "offline"
        assert float(row["at 41.5 ms loop"]) > 0  # the CPU at the reference loop's speed
        assert 0 <= float(row["of which embedding"]) <= float(row["CPU ms/turn"])
        assert float(row["turns/s"]) > 0
        database = float(row["client / database CPU ms/turn"].split(" / ")[1])  # ended backends too
        assert database >= 0 if dialect == "postgresql" else database == 0  # a few clock ticks: maybe 0
        statements, _, kinds = row["SQL/turn"].partition(" ")
        assert float(statements) > 0 and "S" in kinds  # selects counted in the server
        # a plain turn writes each message by one statement, no transaction (so no BEGIN on SQLite);
        # of two workers, the one a turn first lands on today checks the user in (one transaction)
        assert float(row["tx/turn"]) <= (0 if dialect == "sqlite" else 1)
        assert "B" not in kinds or dialect == "postgresql"
        deltas, tools = (float(x) for x in row["deltas / tools per turn"].split(" / "))
        assert deltas > 0 and tools >= 0
        assert float(row["ready s"]) > 0
        assert all(float(x) > 0 for x in row["first byte / first text p50 ms"].split(" / "))
    idle, after = (_memory(cell) for cell in rows[0]["RSS (PSS) MB idle / after"].split(" / "))
    assert 0 < idle[1] <= idle[0] and 0 < after[1] <= after[0]  # PSS never above RSS
    assert after[0] > 50 and idle[0] > 50  # a served app, workers included
    assert [r["RSS (PSS) MB idle / after"] for r in rows[1:]] == ["–", "–"]  # the server's, once


def _memory(cell: str) -> tuple[float, float]:
    """`412 (371)` -> (412.0, 371.0)."""
    rss, _, pss = cell.partition(" (")
    return float(rss), float(pss.rstrip(")"))


def test_profile_summary_groups_samples_by_owner() -> None:
    raw = (
        "run (uvicorn/main.py:1);pump (orrery/agents/detach.py:9);flush (sqlalchemy/orm/session.py:4) 6\n"
        "run (uvicorn/main.py:1);pump (orrery/agents/detach.py:9);dumps (json/encoder.py:2) 3\n"
        "run (uvicorn/main.py:1);send (h11/_connection.py:5) 1\n"
    )
    summary = profiling.summarize_profile(raw)
    assert "10 samples" in summary
    assert "| SQLAlchemy ORM | 60% |" in summary
    assert "| Orrery | 30% |" in summary  # json called from Orrery counts as Orrery's own
    assert "| pump (orrery/agents/detach.py) | 30.0% |" in summary  # own time
    assert "| pump (orrery/agents/detach.py) | 90.0% |" in summary  # total time


def test_model_floor_drives_the_same_run_three_ways(capsys: pytest.CaptureFixture[str]) -> None:
    """The three ways of driving the bare run (an agent's two, the turn's own loop) stream the run's
    events; the bench prints a row each."""
    import asyncio

    from bench import model_floor

    agent = model_floor._agent(5)
    assert asyncio.run(model_floor._by_events(agent)) >= asyncio.run(model_floor._by_nodes(agent)) > 5
    assert asyncio.run(model_floor._by_loop(agent)(agent)) > 5
    model_floor.main(["--runs", "2", "--deltas", "5"])
    out = capsys.readouterr().out.splitlines()
    names = [line.split("|")[1].strip() for line in out if line.startswith("| ") and "|---" not in line]
    assert names[1:] == [
        "run_stream_events",
        "Agent.iter + node streams",
        "the turn's loop (direct API + ToolManager)",
    ]


def test_sqlite_driver_bench_prints_both_drivers(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import sqlite_driver

    sqlite_driver.main(["--runs", "8"])
    rows = [line.split("|")[1].strip() for line in capsys.readouterr().out.splitlines()[2:]]
    assert rows == ["inline", "aiosqlite"]


def test_direct_bench_prints_both_ways_per_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import direct

    direct.main(["--runs", "10", "--dialect", "sqlite"])
    rows = [[c.strip() for c in line.split("|")[1:3]] for line in capsys.readouterr().out.splitlines()[2:]]
    assert rows == [["sqlite", "1"], ["sqlite", "3"]]


def test_orchestrator_bench_splits_a_turns_cpu_into_its_phases(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import orchestrator

    orchestrator.main(["--dialects", "sqlite", "--turns", "4", "--sessions", "2"])
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| sqlite"))
    total, context, model, persistence = (float(c) for c in row.split("|")[4:8])
    assert context > 0 and persistence > 0 and model > 0  # each phase's functions were found and timed
    assert context + persistence < total


def test_distinct_questions_differ_and_keep_the_question() -> None:
    from bench.door import QUESTION, _question

    first, second = _question(distinct=True), _question(distinct=True)
    assert first != second and first.endswith(QUESTION) and second.endswith(QUESTION)
    assert _question(distinct=False) == QUESTION


def test_provider_streams_a_tool_call_then_the_reply_with_usage() -> None:
    import json

    from bench import provider

    def events(body: dict[str, object]) -> list[dict[str, object]]:
        raw = b"".join(provider.stream(body)).decode().split("\n\n")
        assert raw[-2] == "data: [DONE]"
        return [json.loads(e[6:]) for e in raw[:-2]]

    tools = [{"type": "function", "function": {"name": provider.TOOL, "parameters": {}}}]
    asked = events({"model": "m", "tools": tools, "messages": [{"role": "user", "content": "hi"}]})
    calls = [c["delta"]["tool_calls"][0] for e in asked for c in e["choices"] if "tool_calls" in c["delta"]]
    assert calls[0]["function"]["name"] == provider.TOOL
    assert json.loads("".join(c["function"]["arguments"] for c in calls)) == {"query": "billing"}
    answered = events({"model": "m", "tools": tools, "messages": [{"role": "tool", "content": "- B-1"}]})
    texts = [c["delta"].get("content") for e in answered for c in e["choices"] if c["delta"].get("content")]
    assert "".join(texts) == provider.REPLY and len(texts) == provider.TEXT_DELTAS
    history = [{"role": "user", "content": "When is it due?"}, {"role": "tool", "content": "- B-1"}]
    again = events({"model": "m", "tools": tools, "messages": history})  # a reply to that question
    text = "".join(c["delta"].get("content") or "" for e in again for c in e["choices"])
    assert text == provider.reply_for({"messages": history}) == f"On 'When is it due?': {provider.REPLY}"
    for stream in (asked, answered):  # the finish reason, then the usage chunk
        assert stream[-2]["choices"][0]["finish_reason"] in ("tool_calls", "stop")
        assert stream[-1]["usage"] == provider.USAGE and stream[-1]["choices"] == []


def test_model_client_is_refused_without_the_provider_or_unknown() -> None:
    for argv in (["--model-client", "litellm"], ["--provider", "--model-client", "nope"]):
        with pytest.raises(SystemExit):
            door.main(argv)


def test_door_through_the_fake_provider_streams_its_tool_call_and_reply(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--provider`: the server streams from the fake OpenAI-compatible provider (a tool call, then
    text) through its own model client and through litellm, with no error; nothing is timed."""
    monkeypatch.setattr(door, "FORK_FOR_TESTS", True)
    argv = ["--provider", "--dialect", "sqlite", "--sessions", "2", "--turns", "2", "--quiet-turns", "2"]
    door.main([*argv, "--distinct", "--model-client", "auto,litellm"])
    rows = _rows(capsys.readouterr().out)
    assert [r["sessions x turns"] for r in rows] == ["2 x 2", "1 x 2"] * 2
    # the server's own choice (the direct client, where the checkout wires it), then litellm's by
    # ORRERY_MODEL_CLIENT, each as the server had it loaded
    assert rows[0]["client"] in ("direct", "direct+litellm") and rows[2]["client"] == "litellm"
    for row in rows:
        assert row["errors"] == "0"
        deltas, tools = (float(x) for x in row["deltas / tools per turn"].split(" / "))
        assert deltas > 0 and tools == 1.0  # the provider's search_knowledge call, then its reply
        assert float(row["CPU ms/turn"]) > 0


def test_letta_comparison_needs_a_letta_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bench.letta` drives the user's own Letta install; without one it refuses before starting
    anything (Orrery ships none of Letta's code)."""
    from bench import letta

    monkeypatch.delenv("LETTA_PYTHON", raising=False)
    with pytest.raises(SystemExit):
        letta.main([])
