"""Example out-of-tree kubesched plugins, written against kubesched.framework only."""
