"""The secure port's certificates as k8s.io/apiserver's dynamiccertificates keep them: the client CA
of kube-system/extension-apiserver-authentication read again after a failed first read, a rotated
bundle taken (a CA taken out of it no longer verifies anyone), the last good one kept when the
ConfigMap is gone or its key empty; the serving certificate and --client-ca-file read again from
their files when they change. The ConfigMap read is faked; the TLS is real (refresh shortened)."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

import kubesched.serving as serving
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.cmd.flags import with_master
from kubesched.serving import Endpoints, ServingOptions
from kubesched.serving.certs import self_signed
from kubesched_dev.localcluster.procs import free_port

REFRESH = 0.2
ENDPOINTS = Endpoints(exposition=lambda: b"# metrics\n", ready=lambda: True, health=lambda: None)


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem(obj: x509.Certificate) -> bytes:
    return obj.public_bytes(serialization.Encoding.PEM)


class CA:
    def __init__(self, name: str) -> None:
        self.key = _key()
        now = dt.datetime.now(dt.UTC)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.name = subject
        self.cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.pem = _pem(self.cert)

    def client(self, tmp: Path, cn: str, org: str) -> tuple[Path, Path]:
        key = _key()
        now = dt.datetime.now(dt.UTC)
        subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                             x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(self.name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                .sign(self.key, hashes.SHA256()))
        crt, pk = tmp / f"{cn}-{id(self)}.crt", tmp / f"{cn}-{id(self)}.key"
        crt.write_bytes(_pem(cert))
        pk.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))
        return crt, pk


async def get(port: int, cert: tuple[Path, Path] | None = None) -> tuple[str, bytes]:
    """(status line or the TLS failure, the server certificate's DER) of GET /metrics."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cert is not None:
        ctx.load_cert_chain(*cert)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    except (ssl.SSLError, ConnectionError) as exc:
        return f"TLS: {type(exc).__name__}", b""
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    try:
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = await asyncio.wait_for(reader.read(), 10)
    except (ssl.SSLError, ConnectionError) as exc:  # TLS 1.3: the refusal comes after the handshake
        return f"TLS: {type(exc).__name__}", der
    finally:
        writer.close()
    return (data.split(b"\r\n", 1)[0].decode() if data else "TLS: closed"), der


class ConfigMap:
    """The reads of the ConfigMap's client-ca-file, answered from a script (the last repeats)."""

    def __init__(self) -> None:
        self.answers: list[bytes | Exception | None] = []
        self.calls = 0

    async def __call__(self, _client: object) -> bytes | None:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def read_again(self, times: int = 2) -> None:
        """Until it has been read `times` more times (the CA of the last is then in place)."""
        target = self.calls + times
        for _ in range(int(5 / 0.01)):
            if self.calls >= target:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"the ConfigMap was read {self.calls} times, not {target}: it is not read again")





Starter = Callable[..., Awaitable[tuple[serving.SecureServer, int]]]


@pytest.fixture
async def start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                caplog: pytest.LogCaptureFixture) -> AsyncIterator[Starter]:
    caplog.set_level(logging.DEBUG, logger="kubesched")  # what is logged on the way must not break it
    started: list[serving.SecureServer] = []

    async def go(configmap: ConfigMap | None = None, **options: object) -> tuple[serving.SecureServer, int]:
        if configmap is not None:
            monkeypatch.setattr(serving, "lookup_client_ca", configmap)
        port = free_port()
        opts = ServingOptions(secure_port=port, bind_address="127.0.0.1",
                              authentication_skip_lookup=configmap is None, **options).validate()  # type: ignore[arg-type]
        secure = serving.prepare(opts, with_master(None, "http://127.0.0.1:9"))
        assert secure is not None
        secure.refresh = REFRESH
        started.append(secure)
        await secure.start(ENDPOINTS)
        return secure, port

    yield go
    for secure in started:
        await secure.close()


async def test_the_cluster_client_ca_is_read_again_rotated_and_kept(start: Starter,
                                                                    tmp_path: Path) -> None:
    one, two = CA("one"), CA("two")
    admin_one, admin_two = one.client(tmp_path, "admin", "system:masters"), two.client(tmp_path, "admin",
                                                                                       "system:masters")
    configmap = ConfigMap()
    configmap.answers = [ApiConnectionError("connection refused")]  # the first read fails
    _, port = await start(configmap)
    configmap.answers = [one.pem]
    await configmap.read_again()  # retried, without waiting for a restart
    assert (await get(port, admin_one))[0] == "HTTP/1.1 200 OK"

    configmap.answers = [two.pem]  # rotated: CA one taken out of the bundle
    await configmap.read_again()
    assert (await get(port, admin_two))[0] == "HTTP/1.1 200 OK"
    assert (await get(port, admin_one))[0].startswith("TLS: ")  # no longer trusted

    for gone in (ApiError(404, "NotFound", 'configmaps "extension-apiserver-authentication" not found'), None):
        configmap.answers = [gone]  # deleted, or its key emptied: the last good bundle stays, as Kubernetes'
        await configmap.read_again()
        assert (await get(port, admin_two))[0] == "HTTP/1.1 200 OK"
        assert (await get(port, admin_one))[0].startswith("TLS: ")


async def test_the_serving_certificate_and_client_ca_file_are_read_again(start: Starter,
                                                                        tmp_path: Path) -> None:
    crt, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    first, first_key = self_signed("first", ["127.0.0.1"], [])
    crt.write_bytes(first)
    key.write_bytes(first_key)
    one, two = CA("one"), CA("two")
    ca_file = tmp_path / "client-ca.crt"
    ca_file.write_bytes(one.pem)
    _, port = await start(tls_cert_file=str(crt), tls_private_key_file=str(key), client_ca_file=str(ca_file))
    status, der = await get(port, one.client(tmp_path, "admin", "system:masters"))
    assert status == "HTTP/1.1 200 OK"
    assert der == x509.load_pem_x509_certificates(first)[0].public_bytes(serialization.Encoding.DER)

    second, second_key = self_signed("second", ["127.0.0.1"], [])
    key.write_bytes(second_key)
    crt.write_bytes(second)
    ca_file.write_bytes(two.pem)
    await asyncio.sleep(4 * REFRESH)
    status, der = await get(port, two.client(tmp_path, "admin", "system:masters"))
    assert status == "HTTP/1.1 200 OK"
    assert der == x509.load_pem_x509_certificates(second)[0].public_bytes(serialization.Encoding.DER)
    assert (await get(port, one.client(tmp_path, "admin2", "system:masters")))[0].startswith("TLS: ")

    crt.write_bytes(b"")  # half-written, or a key that does not match: the last good pair is served
    await asyncio.sleep(4 * REFRESH)
    assert (await get(port))[1] == x509.load_pem_x509_certificates(second)[0].public_bytes(serialization.Encoding.DER)
