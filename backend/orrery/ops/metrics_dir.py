"""Choose the directory worker processes share their Prometheus samples through.

Kept apart from `orrery.ops.metrics`: prometheus_client decides at import time whether it runs in
multiprocess mode, so the serving process must set the variable before anything imports it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def prepare_metrics_dir(configured: str | None, workers: int) -> str | None:
    """With a configured directory, or several workers: empty it (stale samples of a previous run
    would be added in) and export `PROMETHEUS_MULTIPROC_DIR` for the workers to inherit."""
    if not configured and workers <= 1:
        return None
    path = Path(configured) if configured else Path(tempfile.mkdtemp(prefix="orrery-metrics-"))
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    return str(path)
