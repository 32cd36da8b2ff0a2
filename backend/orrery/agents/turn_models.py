"""The models a process's turns, summaries and background jobs run on: each built once per process
and name from the default factory (a real provider's client keeps its connections), or per use from
any other factory (a test may swap its model between turns)."""

from __future__ import annotations

from collections.abc import Callable

from pydantic_ai.models import Model

from orrery.agents.attempts import timed
from orrery.agents.models import build_model, summarizer_for
from orrery.config import Settings
from orrery.memory.summaries import Summarizer

ModelFactory = Callable[[str, Settings], Model]


class TurnModels:
    """Models by name, with the turn's timeout; `factory` may be swapped at any time."""

    def __init__(self, settings: Settings, factory: ModelFactory = build_model) -> None:
        self.settings = settings
        self.factory = factory
        self._models: dict[str, Model] = {}
        self._summarizers: dict[str, Summarizer | None] = {}

    def turn_model(self, model: str | None) -> Model:
        """The turn's model (`None`: the configured one), with its timeout."""
        name = model or self.settings.model
        if self.factory is not build_model:
            return self.job_model(name)
        if name not in self._models:
            self._models[name] = self.job_model(name)
        return self._models[name]

    def job_model(self, name: str) -> Model:
        """A model built now, with the turn's timeout (a background job's)."""
        return timed(self.factory(name, self.settings), self.settings.model_timeout_seconds)

    def summarizer(self, model: str | None = None) -> Summarizer | None:
        """The turn's model compacts history for the `summary` strategy (offline: extractive)."""
        name = model or self.settings.model
        if self.factory is not build_model:  # a test's factory: its model of the moment
            return summarizer_for(self.settings, name, self.factory)
        if name not in self._summarizers:
            self._summarizers[name] = summarizer_for(self.settings, name)
        return self._summarizers[name]
