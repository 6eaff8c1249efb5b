"""Git hooks: installing the shims (`install`), the work they hand off (`runner`), and the
pre-commit gate (`guard`). Not named `hooks`: that is the shipped shim folder."""
