"""The `extenders` of a KubeSchedulerConfiguration: read strictly, then checked as kube-scheduler's
validateExtenders does (pkg/scheduler/apis/config/validation), with its messages."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.extender import ExtenderConfig, ExtenderManagedResource, ExtenderTLSConfig
from kubesched.framework.field_errors import FieldError
from kubesched.framework.fields import (
    Errors,
    as_mapping,
    check_fields,
    child,
    get_bool,
    get_duration,
    get_int,
    get_list,
    get_mapping,
    get_str,
    index,
)
from kubesched.framework.resources import is_native_resource
from kubesched.plugins.helper.label_selector import label_key_problems

EXTENDER_FIELDS = (
    "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
    "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
)
TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
MANAGED_RESOURCE_FIELDS = ("name", "ignoredByScheduler")


def parse_extenders(doc: Mapping[str, Any], errs: Errors) -> tuple[ExtenderConfig, ...]:
    """Every `extenders[i]` read, then validated; problems go to `errs`."""
    out: list[ExtenderConfig] = []
    for i, item in enumerate(get_list(doc, "extenders", "", errs)):
        path = index("extenders", i)
        obj = as_mapping(item, path, errs)
        if obj is None:
            continue
        out.append(_extender(obj, path, errs))
    errs.extend(validate_extenders(out))
    return tuple(out)


def _extender(obj: Mapping[str, Any], path: str, errs: Errors) -> ExtenderConfig:
    check_fields(obj, path, EXTENDER_FIELDS, errs)

    def text(key: str) -> str:
        return get_str(obj, key, path, errs) or ""

    def flag(key: str) -> bool:
        return bool(get_bool(obj, key, path, errs))

    return ExtenderConfig(
        url_prefix=text("urlPrefix"), filter_verb=text("filterVerb"), preempt_verb=text("preemptVerb"),
        prioritize_verb=text("prioritizeVerb"), weight=get_int(obj, "weight", path, errs) or 0,
        bind_verb=text("bindVerb"), enable_https=flag("enableHTTPS"), tls_config=_tls(obj, path, errs),
        http_timeout=get_duration(obj, "httpTimeout", path, errs) or 0.0,
        node_cache_capable=flag("nodeCacheCapable"), managed_resources=_managed(obj, path, errs),
        ignorable=flag("ignorable"))


def _tls(obj: Mapping[str, Any], path: str, errs: Errors) -> ExtenderTLSConfig | None:
    raw = get_mapping(obj, "tlsConfig", path, errs)
    if raw is None:
        return None
    p = child(path, "tlsConfig")
    check_fields(raw, p, TLS_FIELDS, errs)

    def data(key: str) -> bytes:
        value = get_str(raw, key, p, errs)
        if not value:
            return b""
        try:
            # JSON and YAML carry a []byte as standard base64, as Go's decoder reads it.
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            errs.append(e.invalid(child(p, key), value, "must be base64-encoded PEM data"))
            return b""

    return ExtenderTLSConfig(
        insecure=bool(get_bool(raw, "insecure", p, errs)), server_name=get_str(raw, "serverName", p, errs) or "",
        cert_file=get_str(raw, "certFile", p, errs) or "", key_file=get_str(raw, "keyFile", p, errs) or "",
        ca_file=get_str(raw, "caFile", p, errs) or "", cert_data=data("certData"), key_data=data("keyData"),
        ca_data=data("caData"))


def _managed(obj: Mapping[str, Any], path: str, errs: Errors) -> tuple[ExtenderManagedResource, ...]:
    out: list[ExtenderManagedResource] = []
    base = child(path, "managedResources")
    for j, item in enumerate(get_list(obj, "managedResources", path, errs)):
        p = index(base, j)
        raw = as_mapping(item, p, errs)
        if raw is None:
            continue
        check_fields(raw, p, MANAGED_RESOURCE_FIELDS, errs)
        out.append(ExtenderManagedResource(get_str(raw, "name", p, errs) or "",
                                           bool(get_bool(raw, "ignoredByScheduler", p, errs))))
    return tuple(out)


def _extended_resource_errors(path: str, name: str) -> list[FieldError]:
    """validateExtendedResourceName: a qualified name, outside the kubernetes.io domain and not a quota name."""
    problems = label_key_problems(name)
    if problems:
        return [e.invalid(path, name, msg) for msg in problems]
    if is_native_resource(name) or name.startswith("requests.") or label_key_problems("requests." + name):
        return [e.invalid(path, name, "is an invalid extended resource name")]
    return []


def validate_extenders(extenders: Sequence[ExtenderConfig]) -> list[FieldError]:
    """kube-scheduler's validateExtenders: a prioritizer needs a positive weight, managed resources
    are valid extended resource names given once across all extenders, and one extender binds at most."""
    errs: list[FieldError] = []
    binders = 0
    seen: set[str] = set()
    for i, ext in enumerate(extenders):
        path = index("extenders", i)
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(e.invalid(child(path, "weight"), ext.weight, "must have a positive weight applied to it"))
        if ext.bind_verb:
            binders += 1
        for j, resource in enumerate(ext.managed_resources):
            p = child(index(child(path, "managedResources"), j), "name")
            errs.extend(_extended_resource_errors(p, resource.name))
            if resource.name in seen:
                errs.append(e.invalid(p, resource.name, "duplicate extender managed resource name"))
            seen.add(resource.name)
    if binders > 1:
        errs.append(e.invalid("extenders", f"found {binders} extenders implementing bind",
                              "only one extender can implement bind"))
    return errs

