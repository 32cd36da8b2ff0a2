"""The demo workspace and the synthetic workspace generator."""
