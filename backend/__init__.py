"""Orrery: a backend for chat assistants that work in context.

Ownership map (each module owns one job):

- `backend.config`   settings from the environment and `.env`.
- `backend.errors`   the typed error hierarchy every layer raises.
- `backend.db`       engine/session factory, ORM models, migration checks.
- `backend.repo`     the async data-access layer; every query is scoped to a user.
- `backend.demo`     the demo workspace and the synthetic workspace generator.
- `backend.api`      the FastAPI app (HTTP edge: auth, status mapping).
- `backend.cli`      the `orrery` command line.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
