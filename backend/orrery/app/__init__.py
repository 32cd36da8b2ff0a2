"""The composition root: the one place that knows every layer. It registers plugins (agents, tools,
strategies, expertise) for the HTTP app, builds the HTTP app (`orrery.app.http.create_app`, and
`orrery.app.boot`, what `orrery serve` runs while it warms up) and wires operations.

Nothing below imports it: lower layers read the registries it filled.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orrery.app.http import create_app as create_app


def __getattr__(name: str) -> Any:
    """`from orrery.app import create_app` without importing the HTTP stack for every CLI command."""
    if name == "create_app":
        from orrery.app.http import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
