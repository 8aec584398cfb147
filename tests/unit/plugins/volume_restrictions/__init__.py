"""volume_restrictions."""
