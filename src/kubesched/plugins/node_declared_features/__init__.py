"""NodeDeclaredFeatures (kube-scheduler's nodedeclaredfeatures plugin): see plugin.py; the features
it knows in features.py, component-helpers' inference in framework.py."""

from kubesched.plugins.node_declared_features.plugin import (
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    NAME,
    NodeDeclaredFeatures,
    new,
)

__all__ = ["ERR_REASON_UNSATISFIED_REQUIREMENTS", "NAME", "NodeDeclaredFeatures", "new"]
