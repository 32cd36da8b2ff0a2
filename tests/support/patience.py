"""Time limits in tests are hang guards, never budgets: long enough that a machine busy with other
work (load 5-12 on 2 cores) never reaches them, so a test fails on what it asserts, not on speed."""

HANG_GUARD_SECONDS = 120.0
"""An HTTP client's timeout against a live server (httpx's default, 5 s, is a budget)."""

BROWSER_WAIT_MS = 60_000
"""Playwright's wait for an action, a navigation or an `expect` (its default for `expect`: 5 s)."""
