"""kubesched-dev: the tools for developing kubesched, apart from the scheduler.

The local control plane (`localcluster`, built from the Go modules in `controlplane/`), the
benchmarks and the chaos runner (`bench`) and the demo (`demo`, with the seed's `examples/`). Their
commands join `kubesched`'s own through the `kubesched.commands` entry points (`cmd`), so
`kubesched cluster|bench|chaos|demo` work wherever this package is installed beside kubesched.
"""
