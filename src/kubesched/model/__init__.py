"""Slim typed views of Kubernetes objects and resource quantities."""
