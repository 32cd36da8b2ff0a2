"""The tools the LLM calls, one module per tool group, behind one registry.

Plain typed async functions whose docstrings are the descriptions the model reads; the same registry
feeds the agents, the HTTP API and the MCP server. The first groups (linked entities, graph context,
knowledge base) build on the repository layer in `backend.repo`.
"""
