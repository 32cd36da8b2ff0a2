"""Run the `orrery` console script many times without paying its imports each time.

Started by `tests/support/entrypoint.py` as `python THIS_FILE ORRERY_SCRIPT [MODULE ...]` with the
steps' env and cwd. It imports `orrery.cli` (the script's own first line) and the third-party
libraries the commands use (pydantic-ai, FastAPI, SQLAlchemy, ..., and the MODULEs given), then for
each request line (JSON: argv, stdin/stdout/stderr paths, optional env overrides) forks a child that
points fds 0-2 at those files, applies the overrides and runs the console script file itself as
`__main__` (or, given `code`, that program as `python -c` runs it). A request with `spawn` starts a
long-running command (a server) and answers its pid at once; `wait` requests then report its exit.
Each command runs as in a fresh process whose imports were already done, and exits like one (atexit
handlers, its own exit code, a traceback and 1 on an uncaught exception). The commands' own lazy
imports of Orrery modules are not done here, so a command that forgets to import or register
something still fails. Measured on the entry-point steps: 65 -> 32 CPU-s for the children (the
`gc.freeze()` below halves it: each child's collections would otherwise walk every preloaded object;
ending with `os._exit` after the interpreter's exit steps saves another ~0.1 CPU-s a child, see
`_run`). tiktoken's encodings are read here too (`ENCODINGS`): a command or server that counts tokens
otherwise spends ~0.9 CPU-s reading and decoding them (entry-point steps: 51 -> 45 CPU-s)."""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import importlib.util
import json
import os
import runpy
import sys
import threading
from pathlib import Path

PRELOAD = (
    "aiosqlite",
    "alembic.command",
    "orrery.cli",  # the console script imports it first thing, unconditionally
    "orrery.cli.commands",  # the typer app, which every command but `orrery mcp` (stdio) builds
    "cachetools",
    "fastapi",
    "fastapi_offline",
    "httpx",
    "markdown_it",
    "numpy",
    "onnx.helper",  # the local embedder: a server's warm-up and `demo load` write its graph
    "onnx.numpy_helper",
    "onnxruntime",  # and run it (imports start no thread: the session, made after fork, does)
    "opentelemetry.instrumentation.utils",
    "opentelemetry.trace",
    "prometheus_client",
    "pydantic_ai",
    "pydantic_ai.ui.vercel_ai",
    "pythonjsonlogger.json",
    "rich.console",
    "safetensors",
    "snowballstemmer",  # every plugin load (each command) builds the text analyser's stemmer
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "sqlalchemy.ext.asyncio",
    "tokenizers",
    "typer",
    "uvicorn",
    "yaml",
)

ENCODINGS = ("cl100k_base", "o200k_base")
"""The encodings Orrery counts with: the offline model and every model without its own (cl100k_base),
and every stored message, whose tokens are written per encoding (`orrery.db.models.chat`)."""


def _read_encodings() -> None:
    """Load `ENCODINGS` into tiktoken's own per-process registry, from where `orrery.tokens` points
    tiktoken (litellm's bundled copies, unless TIKTOKEN_CACHE_DIR is set), leaving the environment as
    it was: each child still runs `orrery.tokens.configure_tiktoken_cache` and asks tiktoken for the
    encoding by name, and gets this copy instead of reading the file again."""
    import tiktoken

    spec = importlib.util.find_spec("litellm")
    bundled = (
        Path(next(iter(spec.submodule_search_locations or ())), "litellm_core_utils", "tokenizers")
        if spec
        else None
    )
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    if saved is None and bundled is not None and bundled.is_dir():
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
    try:
        for name in ENCODINGS:
            tiktoken.get_encoding(name)
    finally:
        if saved is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)


def _child(script: str, request: dict[str, object]) -> None:
    """In the forked child: fds 0-2 to the request's files, then the console script as `__main__`."""
    for fd, key, flags in (
        (0, "stdin", os.O_RDONLY),
        (1, "stdout", os.O_WRONLY | os.O_CREAT | os.O_APPEND),
        (2, "stderr", os.O_WRONLY | os.O_CREAT | os.O_APPEND),
    ):
        opened = os.open(str(request[key]), flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the child
    overrides = request.get("env")
    if isinstance(overrides, dict):
        os.environ.update(overrides)
    environ = request.get("environ")  # a whole environment instead of the launcher's (servers)
    if isinstance(environ, dict):
        os.environ.clear()
        os.environ.update(environ)
    if request.get("cwd"):
        os.chdir(str(request["cwd"]))
    code = request.get("code")
    if isinstance(code, str):  # `python -c CODE ARGS`: the working directory first on the path
        sys.argv = ["-c", *(str(a) for a in request["argv"])]  # type: ignore[attr-defined]
        sys.path[0] = ""
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        return
    sys.argv = [script, *(str(a) for a in request["argv"])]  # type: ignore[attr-defined]
    runpy.run_path(script, run_name="__main__")  # raises SystemExit with the command's exit code


def _run(script: str, request: dict[str, object]) -> int:
    """The command in the forked child, ended as the interpreter ends a process, up to its teardown:
    the exit code from `SystemExit` (or a traceback and 1), non-daemon threads joined, atexit handlers
    run, stdout and stderr flushed. The caller then leaves with `os._exit`: the teardown (every module
    and object freed) would write to most pages shared with the launcher, ~0.1 CPU-s of copies per
    child for nothing a command relies on."""
    try:
        _child(script, request)
        code = 0  # the script returned without exiting
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter's exit does first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or its pipe's reader gone
            stream.flush()
    return code


def _exit_code(code: object) -> int:
    """A process's exit status for `sys.exit(code)`, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main() -> None:
    script = sys.argv[1]
    sys.path[0] = os.path.dirname(script)  # as for the console script: its own folder, not this one
    for name in (*PRELOAD, *sys.argv[2:]):
        importlib.import_module(name)
    _read_encodings()
    assert threading.active_count() == 1, "a preloaded library started a thread: fork is unsafe"
    gc.freeze()  # the preloaded objects stay out of each child's collections (and its copy-on-write)
    protocol_in, protocol_out = sys.stdin, sys.stdout
    protocol_out.write("ready\n")
    protocol_out.flush()
    for line in protocol_in:
        protocol_out.write(_serve(script, json.loads(line)) + "\n")
        protocol_out.flush()


def _serve(script: str, request: dict[str, object]) -> str:
    """One request: run a command to its end ("CODE CPU"), start one and answer at once ("PID",
    `spawn`), or ask about a started one ("CODE CPU", or "running" with `nohang`)."""
    if "wait" in request:
        flags = os.WNOHANG if request.get("nohang") else 0
        pid, status, usage = os.wait4(int(request["wait"]), flags)  # type: ignore[call-overload]
        if pid == 0:
            return "running"
    else:
        pid = os.fork()
        if pid == 0:
            os._exit(_run(script, request))
        if request.get("spawn"):
            return str(pid)
        _, status, usage = os.wait4(pid, 0)
    return f"{os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime:.3f}"


if __name__ == "__main__":
    main()
