"""NodeAffinity (kube-scheduler's nodeaffinity plugin): see plugin.py; its args in args.py."""
