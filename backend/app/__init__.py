"""The composition root: the one place that knows every layer. It registers plugins (agents, tools,
strategies, expertise) once per process, builds the HTTP app (`backend.app.http.create_app`), wires
operations, and is the `orrery` entry point (`backend.app.cli`), which launches the servers.

Nothing below imports it: lower layers read the registries it filled.
"""
