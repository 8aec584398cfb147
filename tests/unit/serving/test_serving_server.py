"""The secure port's answers as bytes (metav1.Status as apimachinery writes it) and the client
certificate's user; the handler chain itself runs against kube-scheduler in
tests/integration/test_secure_serving.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.serving.server import client_cert_subject, status_body


def test_status_bodies_are_apimachinerys() -> None:
    assert status_body(401, "Unauthorized", "Unauthorized", details=False) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized",'
        b'"reason":"Unauthorized","code":401}\n')
    body = status_body(403, "Forbidden", 'forbidden: User "a&b" cannot get path "/x<y>"', details=True)
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                    b'"forbidden: User \\"a\\u0026b\\" cannot get path \\"/x\\u003cy\\u003e\\"","reason":"Forbidden",'
                    b'"details":{},"code":403}\n')


class _Transport:
    def __init__(self, cert: Any) -> None:
        self.cert = cert

    def get_extra_info(self, name: str) -> Any:
        return self.cert if name == "peercert" else None


class _Request:
    def __init__(self, cert: Any) -> None:
        self.transport = _Transport(cert)


@pytest.mark.parametrize(("cert", "subject"), [
    pytest.param(None, None, id="no-certificate"),
    pytest.param({}, None, id="not-verified"),
    pytest.param({"subject": ((("organizationName", "system:masters"),), (("commonName", "admin"),),
                              (("organizationName", "ops"),))}, ("admin", ("system:masters", "ops")), id="cn-and-orgs"),
])
def test_client_certificate_user(cert: Any, subject: tuple[str, tuple[str, ...]] | None) -> None:
    assert client_cert_subject(_Request(cert)) == subject  # type: ignore[arg-type]
