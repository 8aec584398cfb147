"""Every flag of kube-scheduler v1.37.2 (`kube-scheduler --help`, by its groups): what
`kubesched run` must accept or refuse by name, and all a manifest of kubesched may use."""

from __future__ import annotations

KUBE_SCHEDULER_FLAGS: dict[str, str] = {
    # misc
    "--config": "misc", "--master": "misc", "--write-config-to": "misc",
    # secure serving
    "--bind-address": "secure serving", "--cert-dir": "secure serving", "--disable-http2-serving": "secure serving",
    "--http2-max-streams-per-connection": "secure serving", "--permit-address-sharing": "secure serving",
    "--permit-port-sharing": "secure serving", "--secure-port": "secure serving",
    "--tls-cert-file": "secure serving", "--tls-cipher-suites": "secure serving",
    "--tls-curve-preferences": "secure serving", "--tls-min-version": "secure serving",
    "--tls-private-key-file": "secure serving", "--tls-sni-cert-key": "secure serving",
    # authentication
    "--authentication-kubeconfig": "authentication", "--authentication-skip-lookup": "authentication",
    "--authentication-token-webhook-cache-ttl": "authentication",
    "--authentication-tolerate-lookup-failure": "authentication", "--client-ca-file": "authentication",
    "--requestheader-allowed-names": "authentication", "--requestheader-client-ca-file": "authentication",
    "--requestheader-extra-headers-prefix": "authentication", "--requestheader-group-headers": "authentication",
    "--requestheader-uid-headers": "authentication", "--requestheader-username-headers": "authentication",
    # authorization
    "--authorization-always-allow-paths": "authorization", "--authorization-kubeconfig": "authorization",
    "--authorization-webhook-cache-authorized-ttl": "authorization",
    "--authorization-webhook-cache-unauthorized-ttl": "authorization",
    # deprecated
    "--contention-profiling": "deprecated", "--kube-api-burst": "deprecated", "--kube-api-content-type": "deprecated",
    "--kube-api-qps": "deprecated", "--kubeconfig": "deprecated", "--pod-max-in-unschedulable-pods-duration":
    "deprecated", "--profiling": "deprecated",
    # leader election
    "--leader-elect": "leader election", "--leader-elect-lease-duration": "leader election",
    "--leader-elect-renew-deadline": "leader election", "--leader-elect-resource-lock": "leader election",
    "--leader-elect-resource-name": "leader election", "--leader-elect-resource-namespace": "leader election",
    "--leader-elect-retry-period": "leader election",
    # feature gate
    "--emulated-version": "feature gate", "--feature-gates": "feature gate",
    "--min-compatibility-version": "feature gate",
    # metrics
    "--allow-metric-labels": "metrics", "--allow-metric-labels-manifest": "metrics", "--disabled-metrics": "metrics",
    "--show-hidden-metrics-for-version": "metrics",
    # logs
    "--log-flush-frequency": "logs", "--log-json-info-buffer-size": "logs", "--log-json-split-stream": "logs",
    "--log-text-info-buffer-size": "logs", "--log-text-split-stream": "logs", "--logging-format": "logs",
    "-v": "logs", "--v": "logs", "--vmodule": "logs",
    # global
    "-h": "global", "--help": "global", "--version": "global",
}
