"""What the doors share: HTTP dependencies (auth, sessions), input limits, chat turns, the context
view, tool calls and session rows. Doors never import each other; they meet here."""
