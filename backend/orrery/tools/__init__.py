"""The tools the LLM calls, one module per tool group (graph, knowledge, docs), behind one registry.

Plain typed async functions whose docstrings are the descriptions the model reads; the same registry
(`orrery.tools.registry`) feeds the agents and the MCP server. They build on `orrery.repo`, `orrery.graph`,
`orrery.knowledge` and `orrery.docs`, and turn user mistakes into `ModelRetry` messages.
"""
