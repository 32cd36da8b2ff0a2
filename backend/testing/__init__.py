"""Orrery's testing kit: fixtures, mocked LLMs and context assertions for apps built on Orrery."""
