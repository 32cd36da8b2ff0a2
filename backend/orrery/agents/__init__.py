"""Agents (`definitions`), the first-message router (`router`), the model factory and the offline
model (`models`, `offline`), and the orchestrator that runs a chat turn (`orchestrator`).
"""
