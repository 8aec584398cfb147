"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler's noderesources package):
fit.py, balanced_allocation.py, their shared scoring (scoring.py) and args (args.py)."""
