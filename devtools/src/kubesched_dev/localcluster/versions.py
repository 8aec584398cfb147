"""What the local control plane is built from. Changing a version here changes the cache key."""

from __future__ import annotations

from dataclasses import dataclass

KUBERNETES_VERSION = "v1.37.2"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.7.0"

_K8S_VERSION_PKGS = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")


def _k8s_ldflags() -> str:
    major, minor = KUBERNETES_VERSION.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for pkg in _K8S_VERSION_PKGS:
        flags += [f"-X {pkg}.gitVersion={KUBERNETES_VERSION}", f"-X {pkg}.gitMajor={major}",
                  f"-X {pkg}.gitMinor={minor}", f"-X {pkg}.gitTreeState=clean"]
    return " ".join(flags)


@dataclass(frozen=True)
class Component:
    name: str
    module_dir: str  # directory under controlplane/ holding the wrapper go.mod
    package: str
    ldflags: str
    cold_seconds: int  # measured cold build time on a 2-core machine, for the progress estimate


COMPONENTS: tuple[Component, ...] = (
    Component("etcd", "etcd", "go.etcd.io/etcd/server/v3",
              f"-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA={ETCD_VERSION}", 71),
    Component("kwok", "kwok", "sigs.k8s.io/kwok/cmd/kwok", "-s -w", 144),
    Component("kube-apiserver", "kubernetes", "k8s.io/kubernetes/cmd/kube-apiserver", _k8s_ldflags(), 368),
    Component("kube-controller-manager", "kubernetes", "k8s.io/kubernetes/cmd/kube-controller-manager",
              _k8s_ldflags(), 125),
    Component("kube-scheduler", "kubernetes", "k8s.io/kubernetes/cmd/kube-scheduler", _k8s_ldflags(), 16),
    Component("kubectl", "kubernetes", "k8s.io/kubernetes/cmd/kubectl", _k8s_ldflags(), 34),
)


def summary() -> str:
    """`kubesched version`'s words for the plane (the `kubesched.versions` entry point)."""
    return f"local control plane: Kubernetes {KUBERNETES_VERSION}, etcd {ETCD_VERSION}, kwok {KWOK_VERSION}"
