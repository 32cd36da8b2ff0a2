"""Extension points: strategies, tools, agents and expertise from other packages, no fork needed.

A package contributes through entry points (groups `orrery.strategies`, `orrery.tools`,
`orrery.agents`, `orrery.expertise`) or a module named in `ORRERY_PLUGINS` that defines `strategies`,
`tools`, `agents` and/or `expertise` lists. Everything is loaded once per process, validated as a
whole (a clash or a bad signature stops startup with an error naming the plugin), then registered
in the same registries the built-ins use.
"""

from orrery.plugins.contributions import ENTRY_POINT_GROUPS, Contribution, PluginError
from orrery.plugins.loader import ensure_plugins, plan_plugins
from orrery.tools._errors import readable_errors  # the error helper built-in tools use, for plugin tools

__all__ = [
    "ENTRY_POINT_GROUPS",
    "Contribution",
    "PluginError",
    "ensure_plugins",
    "plan_plugins",
    "readable_errors",
]
