"""Dataset files: read one in Orrery's own format or LoCoMo's (detected), and write one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from orrery.errors import ValidationError as OrreryValidationError
from orrery.evaluation.dataset import Dataset
from orrery.evaluation.locomo import is_locomo, parse_locomo

FORMATS = ("auto", "orrery", "locomo")


def load_dataset(path: Path, fmt: str = "auto") -> Dataset:
    """Read and validate a dataset file, Orrery's own format or LoCoMo's (`fmt`, detected on
    "auto"); a bad file is a clear `ValidationError`."""
    if fmt not in FORMATS:
        raise OrreryValidationError(f"unknown dataset format {fmt!r}; known: {', '.join(FORMATS)}")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OrreryValidationError(f"dataset file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OrreryValidationError(f"dataset file {str(path)!r} is not readable JSON: {exc}") from None
    try:
        return _parse(raw, fmt, path.stem)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise OrreryValidationError(
            f"dataset file {str(path)!r} is invalid at {where}: {first['msg']}"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise OrreryValidationError(f"dataset file {str(path)!r} is invalid: {exc!r}") from None


def _parse(raw: Any, fmt: str, name: str) -> Dataset:
    if fmt == "locomo" or (fmt == "auto" and is_locomo(raw)):
        return parse_locomo(raw, name)
    return Dataset.model_validate(raw)


def save_dataset(dataset: Dataset, path: Path) -> None:
    """Write a dataset as indented JSON (stable, diff-friendly)."""
    path.write_text(dataset.model_dump_json(indent=1, exclude_defaults=False) + "\n", encoding="utf-8")
