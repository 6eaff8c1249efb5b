"""The outcome loop (DESIGN.md §7): suggestions recorded before code ships, and what
happened to them once it did."""
