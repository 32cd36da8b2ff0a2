"""The project graph for prompts: linked entities of a focus (`linked`, `linked_format`, `cache`) and
token-budgeted context from seed entities (`context_builder`, `templates`).
"""
