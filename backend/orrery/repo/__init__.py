"""The async data-access layer. Every function takes the calling user and scopes its queries to them.

Modules: `identity` (users, keys, projects), `graph` (entities, edges), `knowledge` (KB),
`memory` (check-ins, user summary), `chat` (sessions, messages, transitions), `scope` (access rules).
"""
