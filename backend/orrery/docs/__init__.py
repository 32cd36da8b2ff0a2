"""Dynamic context loading: chunk a project's docs (`chunker`) into an index in the database, and
serve story-scoped context from it (`index`) instead of whole documents.
"""
