"""Operations: tracing, metrics, structured logs, cost, per-user limits and durable background jobs."""
