"""DynamicResources (kube-scheduler's dynamicresources plugin): see plugin.py."""
