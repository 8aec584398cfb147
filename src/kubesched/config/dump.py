"""The effective configuration as a KubeSchedulerConfiguration document (--write-config-to): what
kubesched runs with, defaults filled in, so `kubesched run --config <it>` runs the same. Every
extension point lists its plugins in full after disabling "*", so nothing depends on defaults
merged at load time."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import yaml

from kubesched.config.load import KIND, format_duration
from kubesched.config.plugins import API_VERSION
from kubesched.config.types import EXTENSION_POINTS, SchedulerConfig
from kubesched.framework.extender import ExtenderConfig


def to_document(config: SchedulerConfig) -> dict[str, Any]:
    le = config.leader_election
    cc = config.client_connection
    profiles = []
    for p in config.profiles:
        plugins: dict[str, Any] = {}
        for point in EXTENSION_POINTS:
            refs = p.plugins.get(point, ())
            enabled = [{"name": r.name, **({"weight": r.weight} if point == "score" else {})} for r in refs]
            plugins[point] = {"enabled": enabled, "disabled": [{"name": "*"}]} if enabled else {
                "disabled": [{"name": "*"}]}
        profile: dict[str, Any] = {"schedulerName": p.scheduler_name, "plugins": plugins}
        if p.percentage_of_nodes_to_score is not None:
            profile["percentageOfNodesToScore"] = p.percentage_of_nodes_to_score
        if p.plugin_args:
            profile["pluginConfig"] = [
                {"name": name, "args": {"apiVersion": API_VERSION, "kind": f"{name}Args", **args}}
                for name, args in sorted(p.plugin_args.items())]
        profiles.append(profile)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "clientConnection": {"kubeconfig": cc.kubeconfig, "contentType": cc.content_type, "qps": cc.qps,
                             "burst": cc.burst},
        "leaderElection": {
            "leaderElect": le.leader_elect, "leaseDuration": format_duration(le.lease_duration_seconds),
            "renewDeadline": format_duration(le.renew_deadline_seconds),
            "retryPeriod": format_duration(le.retry_period_seconds), "resourceLock": le.resource_lock,
            "resourceName": le.resource_name, "resourceNamespace": le.resource_namespace},
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": int(config.pod_initial_backoff_seconds),
        "podMaxBackoffSeconds": int(config.pod_max_backoff_seconds),
        "enableProfiling": config.enable_profiling,
        "enableContentionProfiling": config.enable_contention_profiling,
        "profiles": profiles,
        **({"extenders": _extenders(config.extenders)} if config.extenders else {}),
    }


def _extenders(extenders: Sequence[ExtenderConfig]) -> list[dict[str, Any]]:
    """The extenders as the configuration file writes them (--write-config-to), defaults left out."""
    out: list[dict[str, Any]] = []
    for ext in extenders:
        doc: dict[str, Any] = {"urlPrefix": ext.url_prefix}
        for key, value in (("filterVerb", ext.filter_verb), ("preemptVerb", ext.preempt_verb),
                           ("prioritizeVerb", ext.prioritize_verb), ("weight", ext.weight),
                           ("bindVerb", ext.bind_verb), ("enableHTTPS", ext.enable_https)):
            if value:
                doc[key] = value
        if ext.tls_config is not None:
            tls = ext.tls_config
            doc["tlsConfig"] = {k: v for k, v in (
                ("insecure", tls.insecure), ("serverName", tls.server_name), ("certFile", tls.cert_file),
                ("keyFile", tls.key_file), ("caFile", tls.ca_file),
                ("certData", base64.b64encode(tls.cert_data).decode()),
                ("keyData", base64.b64encode(tls.key_data).decode()),
                ("caData", base64.b64encode(tls.ca_data).decode())) if v}
        if ext.http_timeout:
            doc["httpTimeout"] = format_duration(ext.http_timeout)
        if ext.node_cache_capable:
            doc["nodeCacheCapable"] = True
        if ext.managed_resources:
            doc["managedResources"] = [{"name": r.name, **({"ignoredByScheduler": True} if r.ignored_by_scheduler
                                                            else {})} for r in ext.managed_resources]
        if ext.ignorable:
            doc["ignorable"] = True
        out.append(doc)
    return out


def dumps(config: SchedulerConfig) -> str:
    return yaml.safe_dump(to_document(config), sort_keys=False)
