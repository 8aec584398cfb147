"""CEL device selectors for the structured allocator: compile once per expression (compile.py, with
the environment of environment.py and the Kubernetes libraries of library.py), evaluate per device,
and a cache the allocator takes (cache.py). Built on cel-expr-python, the CEL project's binding of
cel-cpp; see the README's dependency list for why."""
