"""What an agent sees on a turn: long-term memory, context injection, message scoping, expertise,
and the assembly of all of it into a `WorkingContext` within token budgets.
"""
