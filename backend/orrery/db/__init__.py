"""Database layer: engine and sessions (`engine`), models (`models`), migrations (`migrations`)."""

from orrery.db.engine import Database, make_engine

__all__ = ["Database", "make_engine"]
