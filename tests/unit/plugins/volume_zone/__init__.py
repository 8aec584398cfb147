"""volume_zone."""
