"""The team's domain knowledge: full-text search (`search`), load_context_for_task with BFS and
confidence (`load_context`), the Context Packet (`packet`), entry reads and feedback writes
(`entries`), and auto-context for new conversations (`autocontext`).
"""
