"""Test helpers: a throwaway PostgreSQL server and data factories."""
