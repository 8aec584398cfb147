"""cronjob_pool."""
