"""unsupported_fields."""
