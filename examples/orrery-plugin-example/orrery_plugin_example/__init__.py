"""An example Orrery plugin: a retrospective facilitator with its own strategy, tool and expertise.

Installed, it is found through its entry points; or name this module in `ORRERY_PLUGINS`, which
reads the four lists below.
"""

from importlib.resources import files

from orrery_plugin_example.agent import RETRO
from orrery_plugin_example.strategy import DecisionsFirst
from orrery_plugin_example.tool import PROJECT_PULSE

EXPERTISE = files(__name__) / "expertise"

strategies = [DecisionsFirst]
tools = [PROJECT_PULSE]
agents = [RETRO]
expertise = [EXPERTISE]
