"""Context-quality evaluation: a long-conversation dataset format, a deterministic generator, and a
harness that runs scoping strategies on it and measures evidence recall, tokens and time."""
