"""The curated Construct pattern library: markdown files shipped in the wheel."""
