"""Run the `orrery` console script many times without paying its imports each time.

Started by `tests/support/entrypoint.py` as `python THIS_FILE ORRERY_SCRIPT` with the steps' env and
cwd. It imports the third-party libraries the commands use (pydantic-ai, FastAPI, SQLAlchemy, ...: ~3
s of CPU a cold process pays), then for each request line (JSON: argv, stdin/stdout/stderr paths)
forks a child that points fds 0-2 at those files and runs the console script file itself as
`__main__`. The child starts from this process's state before any command ran, so each command runs
as in a fresh process whose third-party imports were already done; it exits like one (atexit
handlers, its own exit code, a traceback and 1 on an uncaught exception). Orrery's own modules are
not pre-imported, so a command that forgets to import or register something still fails.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import threading

PRELOAD = (
    "alembic.command",
    "fastapi",
    "httpx",
    "numpy",
    "pydantic_ai",
    "pydantic_ai.ui.vercel_ai",
    "rich.console",
    "sqlalchemy.ext.asyncio",
    "typer",
    "uvicorn",
)


def _child(script: str, request: dict[str, object]) -> None:
    """In the forked child: fds 0-2 to the request's files, then the console script as `__main__`."""
    for fd, key, flags in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY), (2, "stderr", os.O_WRONLY)):
        opened = os.open(str(request[key]), flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the child
    sys.argv = [script, *(str(a) for a in request["argv"])]  # type: ignore[attr-defined]
    runpy.run_path(script, run_name="__main__")  # raises SystemExit with the command's exit code


def main() -> None:
    script = sys.argv[1]
    sys.path[0] = os.path.dirname(script)  # as for the console script: its own folder, not this one
    for name in PRELOAD:
        importlib.import_module(name)
    assert threading.active_count() == 1, "a preloaded library started a thread: fork is unsafe"
    protocol_in, protocol_out = sys.stdin, sys.stdout
    protocol_out.write("ready\n")
    protocol_out.flush()
    for line in protocol_in:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(script, request)
            sys.exit(0)  # the script returned without exiting
        _, status = os.waitpid(pid, 0)
        protocol_out.write(f"{os.waitstatus_to_exitcode(status)}\n")
        protocol_out.flush()


if __name__ == "__main__":
    main()
