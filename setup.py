"""Build step: copy the top-level `alembic/` and `prompts/` into the wheel as package data.

They stay at the top of the repository (the fixed layout), and `orrery.resources` finds the copies
under `orrery/_bundled/` in an installed package. Everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("alembic", "prompts")


class BuildWithData(build_py):
    """The standard build, plus the migration chain and prompts inside `orrery/_bundled/`."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout directly
            return
        root = Path(__file__).resolve().parent
        for name in SHIPPED:
            target = Path(self.build_lib) / "orrery" / "_bundled" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(root / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildWithData})
