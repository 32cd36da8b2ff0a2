"""Where the data shipped with Orrery lives: the Alembic chain and the prompts.

In a checkout they are the top-level `alembic/` and `prompts/` folders; a built wheel carries copies
inside the package (`orrery/_bundled/`, copied by `setup.py` at build time), found through
`importlib.resources` so an installed `orrery` never looks outside its own package.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Literal

from orrery.errors import ConfigurationError

BUNDLED = "_bundled"
Shipped = Literal["alembic", "prompts"]
CHECKOUT_ROOT = Path(__file__).resolve().parents[2]


@cache
def shipped_dir(name: Shipped) -> Path:
    """The directory of `alembic` or `prompts`: the packaged copy if present, else the checkout's."""
    packaged = files("orrery").joinpath(BUNDLED, name)
    if packaged.is_dir():
        return Path(str(packaged))  # wheels install unzipped: a real directory
    checkout = CHECKOUT_ROOT / name
    if checkout.is_dir():
        return checkout
    raise ConfigurationError(f"Orrery's {name}/ directory is missing from {packaged} and {checkout}")


def prompts_dir(*parts: str) -> Path:
    """A folder under `prompts/` (`prompts_dir("agents")`)."""
    return shipped_dir("prompts").joinpath(*parts)
