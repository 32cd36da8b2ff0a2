"""The tools the LLM calls, one module per tool group (graph, knowledge, docs), behind one registry.

Plain typed async functions whose docstrings are the descriptions the model reads; the same registry
(`tools.registry`) feeds the agents and the MCP server. They build on `backend.repo`, `backend.graph`,
`backend.knowledge` and `backend.docs`, and turn user mistakes into `ModelRetry` messages.
"""
