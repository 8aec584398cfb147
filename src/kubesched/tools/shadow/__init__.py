"""`kubesched shadow`: watch another scheduler's binds and say what kubesched would have done on
the same state, writing nothing. classify.py is the pure verdict; watch.py keeps the cache from the
informers and evaluates each bind before the cache takes it in."""
