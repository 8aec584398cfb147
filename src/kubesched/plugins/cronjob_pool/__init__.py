"""CronJobPool: node pools dedicated to CronJob pods, kubesched's own plugin (see plugin.py); its pool
config (config.py) and the owner chain that tells a CronJob's pod (ownership.py)."""
