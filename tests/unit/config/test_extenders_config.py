"""The `extenders` of a configuration: read into ExtenderConfig, checked with kube-scheduler's
validateExtenders messages (pkg/scheduler/apis/config/validation/validation_test.go's extender cases),
and written back by --write-config-to."""

from __future__ import annotations

import pytest

from kubesched.config import ConfigError, loads
from kubesched.config.dump import dumps
from kubesched.config.types import ExtenderConfig, ExtenderManagedResource, ExtenderTLSConfig

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def with_extenders(body: str) -> str:
    return HEAD + "extenders:\n" + "".join(f"  {line}\n" for line in body.strip("\n").splitlines())


def test_every_field_is_read() -> None:
    text = with_extenders("""
- urlPrefix: https://ext.example:8443/scheduler
  filterVerb: filter
  preemptVerb: preempt
  prioritizeVerb: prioritize
  weight: 3
  bindVerb: bind
  enableHTTPS: true
  tlsConfig:
    insecure: false
    serverName: ext.example
    certFile: /c.pem
    keyFile: /k.pem
    caFile: /ca.pem
    caData: Q0E=
  httpTimeout: 1m30s
  nodeCacheCapable: true
  managedResources:
    - name: example.com/gpu
      ignoredByScheduler: true
  ignorable: true
""")
    assert loads(text).extenders == (ExtenderConfig(
        url_prefix="https://ext.example:8443/scheduler", filter_verb="filter", preempt_verb="preempt",
        prioritize_verb="prioritize", weight=3, bind_verb="bind", enable_https=True,
        tls_config=ExtenderTLSConfig(server_name="ext.example", cert_file="/c.pem", key_file="/k.pem",
                                     ca_file="/ca.pem", ca_data=b"CA"),
        http_timeout=90.0, node_cache_capable=True,
        managed_resources=(ExtenderManagedResource("example.com/gpu", True),), ignorable=True),)


def test_http_timeout_defaults_to_five_seconds() -> None:
    config = loads(with_extenders("- urlPrefix: http://x\n"))
    assert config.extenders[0].http_timeout == 0.0
    assert config.extenders[0].timeout == 5.0


VALIDATION_CASES = [
    pytest.param("- urlPrefix: http://x\n  prioritizeVerb: prioritize\n  weight: -1\n",
                 ["extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"],
                 id="extender-negative-weight"),
    pytest.param("- urlPrefix: http://x\n  prioritizeVerb: prioritize\n",
                 ["extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"],
                 id="prioritizer-without-weight"),
    pytest.param("- urlPrefix: http://x\n  weight: 0\n", [], id="no-prioritizer-needs-no-weight"),
    pytest.param("- urlPrefix: http://x\n  prioritizeVerb: prioritize\n  weight: 1\n  managedResources:\n"
                 "    - name: example.com/foo\n    - name: example.com/foo\n",
                 ['extenders[0].managedResources[1].name: Invalid value: "example.com/foo": duplicate extender '
                  "managed resource name"], id="extender-duplicate-managed-resources"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: example.com/foo\n"
                 "- urlPrefix: http://y\n  managedResources:\n    - name: example.com/foo\n",
                 ['extenders[1].managedResources[0].name: Invalid value: "example.com/foo": duplicate extender '
                  "managed resource name"], id="duplicate-across-extenders"),
    pytest.param("- urlPrefix: http://x\n  bindVerb: foo\n  prioritizeVerb: prioritize\n  weight: 1\n"
                 "- urlPrefix: http://y\n  prioritizeVerb: prioritize\n  bindVerb: bar\n  weight: 1\n",
                 ['extenders: Invalid value: "found 2 extenders implementing bind": only one extender can '
                  "implement bind"], id="extender-duplicate-bind"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: memory\n",
                 ['extenders[0].managedResources[0].name: Invalid value: "memory": is an invalid extended '
                  "resource name"], id="native-resource"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: kubernetes.io/foo\n",
                 ['extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid '
                  "extended resource name"], id="kubernetes-io-domain"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: requests.example.com/foo\n",
                 ['extenders[0].managedResources[0].name: Invalid value: "requests.example.com/foo": is an '
                  "invalid extended resource name"], id="quota-prefix"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: example.com/-foo\n",
                 ['extenders[0].managedResources[0].name: Invalid value: "example.com/-foo": name part must '
                  "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"], id="bad-name-part"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: Example.com/foo\n",
                 ['extenders[0].managedResources[0].name: Invalid value: "Example.com/foo": prefix part a '
                  "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
                 id="bad-prefix"),
    pytest.param("- urlPrefix: http://x\n  managedResources:\n    - name: ''\n",
                 ['extenders[0].managedResources[0].name: Invalid value: "": name part must be non-empty',
                  'extenders[0].managedResources[0].name: Invalid value: "": name part must consist of '
                  "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                  "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"], id="empty-name"),
    pytest.param("- urlPrefix: http://x\n  filterVerbs: filter\n",
                 ["extenders[0].filterVerbs: Unknown field (did you mean filterVerb?)"], id="unknown-field"),
    pytest.param("- urlPrefix: http://x\n  httpTimeout: soon\n",
                 ['extenders[0].httpTimeout: Invalid value: "soon": must be a duration'], id="bad-timeout"),
    pytest.param("- urlPrefix: http://x\n  tlsConfig:\n    caData: '***'\n",
                 ['extenders[0].tlsConfig.caData: Invalid value: "***": must be base64-encoded PEM data'],
                 id="bad-base64"),
    pytest.param("- urlPrefix: http://x\n  weight: heavy\n",
                 ['extenders[0].weight: Invalid value: "heavy": must be an integer'], id="weight-not-int"),
]


@pytest.mark.parametrize(("body", "want"), VALIDATION_CASES)
def test_validation(body: str, want: list[str]) -> None:
    if not want:
        loads(with_extenders(body))
        return
    with pytest.raises(ConfigError) as info:
        loads(with_extenders(body))
    got = [str(err) for err in info.value.errors]
    for expected in want:
        assert any(g.startswith(expected) for g in got), f"{expected!r} not in {got!r}"
    assert len(got) == len(want), got


def test_write_config_to_keeps_the_extenders() -> None:
    text = with_extenders("""
- urlPrefix: http://127.0.0.1:8888/
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  httpTimeout: 2s
  nodeCacheCapable: true
  managedResources:
    - name: example.com/gpu
      ignoredByScheduler: true
- urlPrefix: http://127.0.0.1:9999/
  bindVerb: bind
  ignorable: true
  tlsConfig:
    insecure: true
""")
    config = loads(text)
    assert loads(dumps(config)).extenders == config.extenders
