"""The serving certificate: client-go's self-signed shape, --cert-dir written once and reused,
given files used as they are, and the flag named when something is wrong."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from kubesched.serving.certs import CertificateError, alternates, self_signed, server_context, serving_cert


def _chain(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)


def test_self_signed_is_client_gos_shape() -> None:
    now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
    chain, key = self_signed("localhost", ["127.0.0.1"], ["localhost"], now=now)
    leaf, ca = _chain(chain)
    stamp = int(now.timestamp())
    assert leaf.subject.rfc4514_string() == f"CN=localhost@{stamp}"
    assert ca.subject.rfc4514_string() == f"CN=localhost-ca@{stamp}"
    assert leaf.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert leaf.not_valid_before_utc == now - dt.timedelta(hours=1)
    assert leaf.not_valid_after_utc == now - dt.timedelta(hours=1) + dt.timedelta(days=365)
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost", "localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    usage = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert key.startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    leaf.verify_directly_issued_by(ca)  # raises when the CA did not sign it


@pytest.mark.parametrize(("bind", "ips", "dns"), [
    pytest.param("0.0.0.0", ["127.0.0.1"], ["localhost"], id="every-interface"),
    pytest.param("::", ["127.0.0.1"], ["localhost"], id="every-interface-v6"),
    pytest.param("10.1.2.3", ["127.0.0.1", "10.1.2.3"], [], id="one-address"),
])
def test_alternate_names_follow_the_bind_address(bind: str, ips: list[str], dns: list[str]) -> None:
    assert alternates(bind) == (ips, dns)


def test_in_memory_when_no_files_nor_dir() -> None:
    pair = serving_cert("", "", "", "127.0.0.1")
    assert "in memory" in pair.source
    san = _chain(pair.cert_pem)[0].extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
    assert isinstance(server_context(pair), ssl.SSLContext)


def test_cert_dir_is_written_once_then_reused(tmp_path: Path) -> None:
    first = serving_cert("", "", str(tmp_path / "certs"), "0.0.0.0")
    assert (tmp_path / "certs" / "kubesched.crt").read_bytes() == first.cert_pem
    assert (tmp_path / "certs" / "kubesched.key").stat().st_mode & 0o777 == 0o600
    again = serving_cert("", "", str(tmp_path / "certs"), "0.0.0.0")
    assert again.cert_pem == first.cert_pem
    assert "generated" not in again.source


def test_given_files_win_over_cert_dir(tmp_path: Path) -> None:
    chain, key = self_signed("example", [], [])
    (tmp_path / "a.crt").write_bytes(chain)
    (tmp_path / "a.key").write_bytes(key)
    pair = serving_cert(str(tmp_path / "a.crt"), str(tmp_path / "a.key"), str(tmp_path / "unused"), "0.0.0.0")
    assert pair.cert_pem == chain
    assert not (tmp_path / "unused").exists()


@pytest.mark.parametrize(("cert", "key", "flag"), [
    pytest.param("a.crt", "", "--tls-private-key-file", id="key-missing"),
    pytest.param("missing.crt", "missing.key", "--tls-cert-file", id="unreadable"),
])
def test_bad_files_name_the_flag(tmp_path: Path, cert: str, key: str, flag: str) -> None:
    (tmp_path / "a.crt").write_text("x")
    with pytest.raises(CertificateError, match=flag):
        serving_cert(str(tmp_path / cert), str(tmp_path / key) if key else "", "", "0.0.0.0")


def test_a_pair_that_does_not_load_is_told() -> None:
    chain, _ = self_signed("a", [], [])
    _, other_key = self_signed("b", [], [])
    from kubesched.serving.certs import CertKey

    with pytest.raises(CertificateError, match="do not load"):
        server_context(CertKey(chain, other_key, "test"))


def test_client_ca_must_be_pem() -> None:
    pair = serving_cert("", "", "", "127.0.0.1")
    with pytest.raises(CertificateError, match="--client-ca-file"):
        server_context(pair, b"not a certificate")
    ca, _ = self_signed("ca", [], [])
    assert server_context(pair, ca).verify_mode == ssl.CERT_OPTIONAL
