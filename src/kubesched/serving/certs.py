"""The serving certificate, chosen as kube-scheduler's SecureServingOptions does
(MaybeDefaultWithSelfSignedCerts): --tls-cert-file/--tls-private-key-file when given; else
<cert-dir>/kubesched.crt and .key, generated there once when they cannot be read; else a
self-signed pair generated in memory at start.

The generated pair has client-go's shape (GenerateSelfSignedCertKeyWithFixtures): a throwaway CA
named "<host>-ca@<unix time>" signs a serving certificate for <host> plus the alternate names, and
the certificate file holds the serving certificate followed by that CA.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PAIR_NAME = "kubesched"  # kube-scheduler's PairName is "kube-scheduler"
MAX_AGE = dt.timedelta(days=365)
UNSPECIFIED = ("", "0.0.0.0", "::")


class CertificateError(Exception):
    """A serving certificate or key that cannot be used; the message names the flag."""


@dataclass(frozen=True)
class CertKey:
    cert_pem: bytes
    key_pem: bytes
    source: str  # for the log: the files, or "in memory"


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=True, key_encipherment=True, key_cert_sign=cert_sign,
                         content_commitment=False, data_encipherment=False, key_agreement=False,
                         crl_sign=False, encipher_only=False, decipher_only=False)


def self_signed(host: str, alternate_ips: list[str], alternate_dns: list[str],
                now: dt.datetime | None = None) -> tuple[bytes, bytes]:
    """(certificate chain PEM, PKCS#1 RSA key PEM) as client-go generates them."""
    now = now or dt.datetime.now(dt.UTC)
    valid_from = now - dt.timedelta(hours=1)  # client-go's allowance for clock skew
    stamp = int(now.timestamp())
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = _name(f"{host}-ca@{stamp}")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(valid_from).not_valid_after(valid_from + MAX_AGE)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(_usage(cert_sign=True), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names: list[x509.GeneralName] = []
    for value in (host, *alternate_ips, *alternate_dns):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(value)))
        except ValueError:
            names.append(x509.DNSName(value))
    cert = (x509.CertificateBuilder().subject_name(_name(f"{host}@{stamp}")).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(valid_from).not_valid_after(valid_from + MAX_AGE)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(ca_key, hashes.SHA256()))
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    return chain, key_pem


def alternates(bind_address: str) -> tuple[list[str], list[str]]:
    """(IPs, DNS names) kube-scheduler adds: 127.0.0.1, and localhost when bound to every interface
    or else the bind address."""
    if bind_address in UNSPECIFIED:
        return ["127.0.0.1"], ["localhost"]
    return ["127.0.0.1", bind_address], []


def _read(path: Path, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CertificateError(f"{flag}: cannot read {path}: {exc.strerror or exc}") from None


def serving_cert(cert_file: str, key_file: str, cert_dir: str, bind_address: str) -> CertKey:
    """The pair to serve with; raises CertificateError naming the flag at fault."""
    if bool(cert_file) != bool(key_file):
        raise CertificateError("--tls-cert-file and --tls-private-key-file must be given together")
    if cert_file:
        return CertKey(_read(Path(cert_file), "--tls-cert-file"), _read(Path(key_file), "--tls-private-key-file"),
                       f"{cert_file}, {key_file}")
    ips, dns = alternates(bind_address)
    if cert_dir:
        crt, key = Path(cert_dir, f"{PAIR_NAME}.crt"), Path(cert_dir, f"{PAIR_NAME}.key")
        if crt.is_file() and key.is_file():
            return CertKey(_read(crt, "--cert-dir"), _read(key, "--cert-dir"), f"{crt}, {key}")
        chain, key_pem = self_signed("localhost", ips, dns)
        try:
            crt.parent.mkdir(parents=True, exist_ok=True)
            crt.write_bytes(chain)
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(key_pem)
        except OSError as exc:
            raise CertificateError(f"--cert-dir: cannot write the self-signed pair to {cert_dir}: "
                                   f"{exc.strerror or exc}") from None
        return CertKey(chain, key_pem, f"generated self-signed {crt}, {key}")
    chain, key_pem = self_signed("localhost", ips, dns)
    return CertKey(chain, key_pem, "generated self-signed, in memory")


def server_context(pair: CertKey, client_ca_pem: bytes | None = None) -> ssl.SSLContext:
    """A TLS 1.2+ server context; with a client CA, client certificates are asked for and verified
    when given (Go's VerifyClientCertIfGiven), so a client without one is still served."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    # ssl loads a pair only from files: write them where only we can read, for the moment it takes.
    with tempfile.TemporaryDirectory(prefix="kubesched-serving-") as tmp:
        crt, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        for path, data in ((crt, pair.cert_pem), (key, pair.key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            ctx.load_cert_chain(crt, key)
        except ssl.SSLError as exc:
            raise CertificateError(f"the serving certificate and key ({pair.source}) do not load: {exc}") from None
    if client_ca_pem:
        try:
            ctx.load_verify_locations(cadata=client_ca_pem.decode())
        except (ssl.SSLError, UnicodeDecodeError) as exc:
            raise CertificateError(f"--client-ca-file: not a PEM CA bundle: {exc}") from None
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


# k8s.io/apiserver dynamiccertificates.FileRefreshDuration: how often a CA file (and the ConfigMap's
# CA) is checked again, whatever the watches say.
FILE_REFRESH = 60.0


class DynamicTLS:
    """The secure port's TLS context, made again when the serving pair's files, the client CA file
    or the cluster's client CA change (dynamiccertificates' DynamicCertKeyPairContent,
    DynamicFileCAContent, ConfigMapCAController feeding the server's GetConfigForClient): each new
    connection takes the context of the moment, so a rotated certificate is served and a CA taken
    out of the bundle no longer verifies anyone. What does not load leaves the last good one."""

    def __init__(self, pair: CertKey, client_ca: bytes | None = None, *, cert_files: tuple[str, str] | None = None,
                 client_ca_file: str = "") -> None:
        self.pair = pair
        self.client_ca = client_ca or None
        self._cert_files = cert_files
        self._client_ca_file = client_ca_file
        self._ctx = server_context(pair, self.client_ca)

    def context(self) -> ssl.SSLContext:
        return self._ctx

    @property
    def has_files(self) -> bool:
        return self._cert_files is not None or bool(self._client_ca_file)

    def set_client_ca(self, pem: bytes, source: str = "--client-ca-file") -> bool:
        """True when it changed; raises CertificateError (the last good CA stays)."""
        if not pem:
            raise CertificateError(f"{source}: missing content for the client CA bundle")
        if pem == self.client_ca:
            return False
        try:
            ctx = server_context(self.pair, pem)
        except CertificateError as exc:
            raise CertificateError(f"{source}: {str(exc).removeprefix('--client-ca-file: ')}") from None
        self._ctx, self.client_ca = ctx, pem
        return True

    def reload_files(self) -> list[str]:
        """Reads the files again; what changed. Raises CertificateError for the first that does not
        load, after the others are taken (DynamicCertKeyPairContent.loadCertKeyPair: both files
        read, not empty, the key matching the certificate)."""
        changed: list[str] = []
        errors: list[str] = []
        if self._cert_files is not None:
            cert_file, key_file = self._cert_files
            try:
                pair = CertKey(_read(Path(cert_file), "--tls-cert-file"),
                               _read(Path(key_file), "--tls-private-key-file"), f"{cert_file}, {key_file}")
                if not pair.cert_pem or not pair.key_pem:
                    raise CertificateError(f"missing content for the serving certificate ({pair.source})")
                if (pair.cert_pem, pair.key_pem) != (self.pair.cert_pem, self.pair.key_pem):
                    self._ctx, self.pair = server_context(pair, self.client_ca), pair
                    changed.append("serving certificate")
            except CertificateError as exc:
                errors.append(str(exc))
        if self._client_ca_file:
            try:
                if self.set_client_ca(_read(Path(self._client_ca_file), "--client-ca-file")):
                    changed.append("client CA")
            except CertificateError as exc:
                errors.append(str(exc))
        if errors:
            raise CertificateError("; ".join(errors))
        return changed
