"""The composition root: the one place that knows every layer. It registers plugins (agents, tools,
strategies, expertise) once per process, builds the HTTP app (`backend.app.http.create_app`), wires
operations, and is the `orrery` entry point (`backend.app.cli`), which launches the servers.

Nothing below imports it: lower layers read the registries it filled.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.app.http import create_app as create_app


def __getattr__(name: str) -> Any:
    """`from backend.app import create_app` without importing the HTTP stack for every CLI command."""
    if name == "create_app":
        from backend.app.http import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
