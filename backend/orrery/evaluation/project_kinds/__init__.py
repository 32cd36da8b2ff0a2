"""The kinds of project `project_data` generates, one module each: a web team's sprints, a Flask
app, studying geometry, studying statistics, a thesis, a product launch, a data pipeline. See
`project_pools.Domain`."""

from __future__ import annotations

from orrery.evaluation.project_kinds.app import FLASK_APP
from orrery.evaluation.project_kinds.geometry import GEOMETRY
from orrery.evaluation.project_kinds.launch import LAUNCH
from orrery.evaluation.project_kinds.pipeline import PIPELINE
from orrery.evaluation.project_kinds.sprint import SPRINT
from orrery.evaluation.project_kinds.statistics import STATISTICS
from orrery.evaluation.project_kinds.thesis import THESIS

DOMAINS = (SPRINT, FLASK_APP, GEOMETRY, STATISTICS, THESIS, LAUNCH, PIPELINE)
