"""The cluster cache with assume/forget, and the snapshot a cycle reads."""

from kubesched.backend.cache.cache import Cache, CacheError, zone_key

__all__ = ["Cache", "CacheError", "zone_key"]
