"""volume_binding."""
