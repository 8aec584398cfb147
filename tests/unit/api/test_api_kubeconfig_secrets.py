"""A kubeconfig error names the file and where (line and column, or the field) but never prints a
value: the line a YAML error is on, or a value of the wrong type, may be a token or a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.api.kubeconfig import KubeconfigError, load_kubeconfig

SECRET = "s3cr3t-9f8e7d6c5b4a"


def kubeconfig(user: str, cluster: str = "server: https://h:1") -> str:
    return ("apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
            f"clusters:\n- name: c\n  cluster:\n    {cluster}\n"
            f"users:\n- name: u\n  user:\n    {user}\n"
            "contexts:\n- name: ctx\n  context: {cluster: c, user: u}\n")


@pytest.mark.parametrize(("text", "where"), [
    pytest.param(kubeconfig(f"token: {SECRET}: x"), "line 11, column", id="colon-in-a-plain-scalar"),
    pytest.param(kubeconfig(f'token: "{SECRET}'), "line 11, column", id="unclosed-quote"),
    pytest.param(kubeconfig(f"token: {SECRET}\n   client-key-data: {SECRET}"), "line 12, column",
                 id="bad-indentation"),
    pytest.param(kubeconfig(f"token: [{SECRET}"), "line 11, column", id="unclosed-flow-sequence"),
    pytest.param(kubeconfig(f"token: {SECRET}\t"), "line 11, column", id="tab"),
    pytest.param(kubeconfig(f"token: *{SECRET}"), "line 11, column", id="undefined-alias"),
])
def test_a_yaml_error_names_file_and_position_not_the_line(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(KubeconfigError) as err:
        load_kubeconfig(str(path))
    message = str(err.value)
    assert message.startswith(f"{path}: not valid YAML")
    assert where in message
    assert SECRET not in message
    assert SECRET[:6] not in message


@pytest.mark.parametrize(("text", "field"), [
    pytest.param(kubeconfig("token: 918273645546372819"), r"users[0].user.token: expected a string",
                 id="number-for-a-token"),
    pytest.param(kubeconfig(f"token: [{SECRET}]"), r"users[0].user.token: expected a string", id="list-for-a-token"),
    pytest.param(kubeconfig(f"client-key-data: {{k: {SECRET}}}"), "users[0].user.client-key-data: expected",
                 id="mapping-for-key-data"),
    pytest.param(kubeconfig("token: t", cluster=f"server: https://h:1\n    insecure-skip-tls-verify: '{SECRET}'"),
                 "clusters[0].cluster.insecure-skip-tls-verify: expected a boolean", id="string-for-a-boolean"),
    pytest.param(kubeconfig("token: t", cluster=f"server: https://h:1\n    proxy-url: ftp://me:{SECRET}@proxy:1"),
                 'clusters[0].cluster.proxy-url: unsupported scheme "ftp", must be http, https or socks5',
                 id="proxy-url-scheme"),
    pytest.param(kubeconfig("token: t", cluster=f"server: https://h:1\n    proxy-url: 'http://me:{SECRET}@[::1'"),
                 "clusters[0].cluster.proxy-url: not a URL", id="proxy-url-unparsable"),
])
def test_a_field_error_names_the_field_not_the_value(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(KubeconfigError) as err:
        load_kubeconfig(str(path))
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert field in message
    assert SECRET not in message
    assert "918273645546372819" not in message


def test_proxy_url_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(kubeconfig("token: t", cluster="server: https://h:1\n    proxy-url: http://proxy.corp:3128"))
    assert load_kubeconfig(str(path)).proxy_url == "http://proxy.corp:3128"
