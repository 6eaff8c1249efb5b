"""The outcome loop (docs/architecture.md §7): suggestions recorded before code ships, and what
happened to them once it did."""
