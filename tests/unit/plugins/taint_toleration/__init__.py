"""taint_toleration."""
