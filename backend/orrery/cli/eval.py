"""`orrery eval`: generate the scoping dataset and run the strategy bake-off on it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from orrery.cli.common import err, out

T = TypeVar("T")
DatabaseUrl = Annotated[
    str | None, typer.Option(help="Run on this (migrated) database instead of a throwaway SQLite file.")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the results as JSON.")]
DatasetFormat = Annotated[
    str, typer.Option("--format", help="Dataset format: auto (detect), orrery or locomo.")
]
TurnModel = Annotated[str, typer.Option(help="The model the turns run on.")]

eval_app = typer.Typer(
    help="Measure context quality: datasets and the scoping bake-off.", no_args_is_help=True
)


@eval_app.command("make-dataset")
def make_dataset_command(
    out_file: Annotated[Path, typer.Option("--out", help="Where to write the dataset JSON.")],
    seed: Annotated[int, typer.Option(help="Random seed; the same seed writes the same file.")] = 7,
    conversations: Annotated[
        int | None, typer.Option(min=1, max=50, help="How many conversations (default 5, project 6).")
    ] = None,
    kind: Annotated[
        str,
        typer.Option(
            help="coaching: long everyday chats with planted facts; project: one person's project over "
            "5-10 dated chats (instructions, preferences, changed values, milestones)."
        ),
    ] = "coaching",
) -> None:
    """Write a deterministic long-conversation dataset with planted facts and questions."""
    from orrery.evaluation.files import save_dataset
    from orrery.evaluation.make_dataset import make_dataset
    from orrery.evaluation.project_data import make_project_dataset

    if kind not in ("coaching", "project"):
        err.print(f"[bold red]error:[/] --kind must be coaching or project, got {kind!r}")
        raise typer.Exit(2)
    if kind == "project":
        dataset = make_project_dataset(seed, conversations or 6)
    else:
        dataset = make_dataset(seed, conversations or 5)
    try:
        save_dataset(dataset, out_file)
    except OSError as exc:
        err.print(f"[bold red]error:[/] cannot write {str(out_file)!r}: {exc.strerror}")
        raise typer.Exit(1) from None
    turns = sum(len(c.turns()) for c in dataset.conversations)
    questions = sum(len(c.qa) for c in dataset.conversations)
    out.print(
        f"wrote {out_file}: {len(dataset.conversations)} conversations, {turns} turns, {questions} questions"
    )


@eval_app.command("scoping")
def scoping_command(
    dataset: Annotated[Path, typer.Argument(help="A dataset JSON file (see docs/evaluation.md).")],
    strategies: Annotated[
        str, typer.Option(help="Comma-separated registered strategy names.")
    ] = "last_n,token_budget,summary,relevance",
    budgets: Annotated[
        str, typer.Option(help="Comma-separated conversation budgets in tokens.")
    ] = "1000,2000,4000",
    database_url: DatabaseUrl = None,
    as_json: AsJson = False,
    fmt: DatasetFormat = "auto",
) -> None:
    """Evaluate scoping strategies (and the lexical baseline) on a dataset: recall, tokens, time."""
    from orrery.config import get_settings
    from orrery.evaluation.report import parse_budgets, results_table, run_scoping

    try:
        chosen = parse_budgets(budgets)
    except ValueError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    names = [n.strip() for n in strategies.split(",") if n.strip()]
    results = _or_exit(lambda: run_scoping(dataset, names, chosen, get_settings(), database_url, fmt))
    if as_json:
        print(json.dumps({"results": results}, indent=1))
    else:
        _wide(results_table(results), 180)


@eval_app.command("knowledge")
def knowledge_command(
    database_url: DatabaseUrl = None,
    questions: Annotated[
        Path | None, typer.Option(help="Another labelled set of the same shape (default: the frozen one).")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Auto-context on the labelled set: precision/recall of loading, entry hit-rate, confidence."""
    from orrery.config import get_settings
    from orrery.evaluation.knowledge import run_knowledge_eval
    from orrery.evaluation.knowledge_table import knowledge_table

    result = _or_exit(lambda: run_knowledge_eval(get_settings(), database_url, questions))
    if as_json:
        print(json.dumps(result, indent=1))
    else:
        _wide(knowledge_table(result), 150)


@eval_app.command("facts")
def facts_command(
    database_url: DatabaseUrl = None,
    probes: Annotated[
        Path | None, typer.Option(help="Another probe set of the same shape (default: the frozen one).")
    ] = None,
    model: TurnModel = "offline",
    as_json: AsJson = False,
) -> None:
    """Remembered facts on the frozen probe set, through the real turn path: per slice (stated,
    restated, update, forgotten, unremembered), whether the newer fact wins and nothing forgotten
    or unremembered comes back."""
    from orrery.config import get_settings
    from orrery.services.facts_eval import run_facts_eval

    result = _or_exit(lambda: run_facts_eval(get_settings(), database_url, probes, model))
    if as_json:
        print(json.dumps(result, indent=1))
        return
    from rich.table import Table

    table = Table(title="Remembered facts: frozen probe set")
    for column in ("slice", "probes passed", "checks passed", "score"):
        table.add_column(column, justify="left" if column == "slice" else "right")
    rows = [*result["slices"].items(), ("newer fact wins", result["newer_fact_wins"])]
    rows += [("nothing forgotten comes back", result["nothing_forgotten_comes_back"])]
    for name, s in [*rows, ("overall", result["overall"])]:
        score = "-" if s["score"] is None else f"{100 * s['score']:.1f}%"
        table.add_row(name, f"{s['probes_passed']}/{s['probes']}", f"{s['passed']}/{s['checks']}", score)
    out.print(table)
    for f in result["failed"]:
        out.print(f"failed: {f['probe']} {f['kind']} {f['text']!r}")


@eval_app.command("capture")
def capture_command(
    capture_set: Annotated[
        Path | None,
        typer.Option("--set", help="Another labelled set of the same shape (default: the frozen one)."),
    ] = None,
    lexical: Annotated[
        bool, typer.Option("--lexical", help="Without the local embedder (its fallback).")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Capture of standing instructions and preferences on the frozen labelled set (hard negatives
    included): precision and recall per kind, and what was captured wrongly or missed."""
    from orrery.evaluation.capture import run_capture_eval

    result = _or_exit(lambda: run_capture_eval(capture_set, lexical=lexical))
    if as_json:
        print(json.dumps(result, indent=1))
        return
    from rich.table import Table

    table = Table(
        title=f"Standing instruction capture ({result['sentences']} sentences, {result['embedder']})"
    )
    for column in ("kind", "precision", "recall", "captured right", "captured wrongly", "missed"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind, k in result["kinds"].items():
        table.add_row(
            kind, _pct(k["precision"]), _pct(k["recall"]), str(k["true"]), str(k["false"]), str(k["missed"])
        )
    o = result["overall"]
    table.add_row(
        "overall",
        _pct(o["precision"]),
        _pct(o["recall"]),
        str(o["correct"]),
        str(o["captured"] - o["correct"]),
        "",
    )
    out.print(table)
    for f in result["false_captures"]:
        out.print(f"captured wrongly ({f['category']}, as {f['as']}): {f['text']!r}", markup=False)
    for text in result["missed"]:
        out.print(f"missed: {text!r}", markup=False)


@eval_app.command("offline")
def offline_command(
    database_url: Annotated[
        str | None,
        typer.Option(
            help="Run on this (migrated) database, demo loaded into it, instead of a throwaway SQLite file."
        ),
    ] = None,
    questions: Annotated[
        Path | None, typer.Option(help="Another question set of the same shape (default: the frozen one).")
    ] = None,
    part: Annotated[
        str | None, typer.Option(help="Only this part of the set: tuning or held_out (default: both).")
    ] = None,
    model: TurnModel = "offline",
    as_json: AsJson = False,
) -> None:
    """The frozen demo question set through the real turn path on the demo workspace: the share of
    required facts each part's replies contain (a reply showing raw tool JSON scores 0)."""
    from orrery.config import get_settings
    from orrery.services.offline_eval import PARTS, run_offline_eval

    if part is not None and part not in PARTS:
        err.print(f"[bold red]error:[/] --part must be one of {', '.join(PARTS)}")
        raise typer.Exit(2)
    result = _or_exit(
        lambda: run_offline_eval(get_settings(), database_url, questions, model, (part,) if part else PARTS)
    )
    if as_json:
        print(json.dumps(result, indent=1))
        return
    from rich.table import Table

    table = Table(title=f"Demo questions: frozen set, model {model}")
    for column in ("part", "questions fully answered", "facts found", "raw JSON", "score"):
        table.add_column(column, justify="left" if column == "part" else "right")
    for name, s in [*result["parts"].items(), ("overall", result["overall"])]:
        score = "-" if s["score"] is None else f"{100 * s['score']:.1f}%"
        table.add_row(
            name,
            f"{s['questions_full']}/{s['questions']}",
            f"{s['found']}/{s['facts']}",
            str(s["raw_json"]),
            score,
        )
    out.print(table)
    for m in result["missed"]:
        out.print(
            f"missed ({m['part']}): {m['id']} {m['found']}/{m['checks']} {m['question']!r}", markup=False
        )


@eval_app.command("memory")
def memory_command(
    dataset: Annotated[Path, typer.Argument(help="A dataset JSON file (LoCoMo or Orrery format).")],
    caps: Annotated[
        str, typer.Option(help="Comma-separated caps of the earlier-chats budget in tokens.")
    ] = "1000,2000,4000",
    database_url: DatabaseUrl = None,
    within: Annotated[
        bool,
        typer.Option("--within/--no-within", help="Also run the within-chat default at the same budgets."),
    ] = True,
    as_json: AsJson = False,
    fmt: DatasetFormat = "auto",
) -> None:
    """Recall from earlier chats: each session its own chat, each question a new chat's first message."""
    from orrery.config import get_settings
    from orrery.evaluation.memory_report import memory_table, run_memory

    chosen = _caps(caps)
    results = _or_exit(lambda: run_memory(dataset, chosen, get_settings(), database_url, fmt, within))
    if as_json:
        print(json.dumps(results, indent=1))
    else:
        _wide(memory_table(results), 180)


@eval_app.command("focus")
def focus_command(
    caps: Annotated[
        str, typer.Option(help="Comma-separated caps of the earlier-chats budget in tokens.")
    ] = "500,1000,2000",
    boosts: Annotated[
        str, typer.Option(help="Comma-separated same-entity boosts to compare, in standard deviations.")
    ] = "0,0.5",
    as_json: AsJson = False,
) -> None:
    """What recall's same-entity boost is worth: a synthetic project of focused chats (see the docs)."""
    from orrery.config import get_settings
    from orrery.evaluation.focus import run_focus

    chosen = _caps(caps)
    try:
        values = [float(b) for b in boosts.split(",") if b.strip()]
    except ValueError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(2) from None
    if not values or any(v < 0 for v in values):
        err.print("[bold red]error:[/] --boosts needs one or more numbers, none negative")
        raise typer.Exit(2)
    rows = run_focus(get_settings(), chosen, values)
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    from rich.table import Table

    table = Table(title="Same-entity boost: evidence in the recalled section, new chat focused on a task")
    for header in ("boost", "cap", "same task, unnamed", "other task, named", "questions"):
        table.add_column(header, justify="right")
    for r in rows:
        same, other = f"{r['same_task']:.1%}", f"{r['other_named']:.1%}"
        table.add_row(f"{r['boost']:g}", str(r["cap"]), same, other, str(r["questions"]))
    out.print(table)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _or_exit(call: Callable[[], T]) -> T:
    """The eval's result, or its refusal printed as one line and exit code 1 (never a traceback)."""
    from orrery.errors import OrreryError

    try:
        return call()
    except OrreryError as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(1) from None


def _caps(text: str) -> list[int]:
    """`--caps` parsed as budgets are (exit code 2 with the option's own name when it is not)."""
    from orrery.evaluation.report import parse_budgets

    try:
        return parse_budgets(text)
    except ValueError as exc:
        err.print(f"[bold red]error:[/] {str(exc).replace('--budgets', '--caps')}")
        raise typer.Exit(2) from None


def _wide(table: Any, width: int) -> None:
    """A table this wide is read whole, never squeezed to the terminal."""
    from rich.console import Console

    Console(width=max(out.width, width)).print(table)
