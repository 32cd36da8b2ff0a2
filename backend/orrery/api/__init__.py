"""The HTTP edge: authentication, request validation, and error-to-status mapping."""
