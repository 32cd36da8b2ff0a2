"""One turn's working context: strategy resolution, assembly with its receipt, previews and
comparisons, and `build_context`. The one place that combines the domain packages."""
