# Lets `pytest` in this folder import kubesched_example_plugins without installing it: pytest puts
# the folder of this conftest (it has no __init__.py) on sys.path.
