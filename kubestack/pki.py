"""Keys, certificates and tokens a throw-away control plane needs, made at start.

One CA signs the API server's serving certificate (127.0.0.1 and the in-cluster
names); a separate key signs service-account tokens. Callers authenticate with
static bearer tokens (``--token-auth-file``), each a user in chosen groups.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVING_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
SERVING_IPS = ("127.0.0.1", "10.96.0.1")


@dataclass(frozen=True)
class StaticUser:
    """One line of the token file: who a bearer token authenticates as."""

    name: str
    groups: tuple[str, ...]
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def line(self) -> str:
        groups = ",".join(self.groups)
        return f'{self.token},{self.name},{self.name},"{groups}"'


@dataclass(frozen=True)
class Pki:
    """Paths of everything written by :func:`write_pki`."""

    ca_cert: Path
    serving_cert: Path
    serving_key: Path
    sa_key: Path
    sa_pub: Path
    token_file: Path
    users: dict[str, StaticUser]
    ca_key: Path | None = None


def _pem_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _ca() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubestack-ca")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _serving(
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    common_name: str = "kube-apiserver",
    names: tuple[str, ...] = SERVING_NAMES,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    alt: list[x509.GeneralName] = [x509.DNSName(name) for name in names]
    alt += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in SERVING_IPS]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def write_pki(folder: Path, users: list[StaticUser]) -> Pki:
    """Write a CA, a serving pair, a service-account key pair and a token file."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = _ca()
    serving_key, serving_cert = _serving(ca_key, ca_cert)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pki = Pki(
        ca_cert=folder / "ca.crt",
        serving_cert=folder / "apiserver.crt",
        serving_key=folder / "apiserver.key",
        sa_key=folder / "sa.key",
        sa_pub=folder / "sa.pub",
        token_file=folder / "tokens.csv",
        users={user.name: user for user in users},
        ca_key=folder / "ca.key",
    )
    pki.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    # Kept (0600) to sign the serving pairs of components that start later:
    # HAMi's webhook is called by the API server, which must trust it.
    folder.joinpath("ca.key").write_bytes(_pem_key(ca_key))
    pki.serving_cert.write_bytes(serving_cert.public_bytes(serialization.Encoding.PEM))
    pki.serving_key.write_bytes(_pem_key(serving_key))
    pki.sa_key.write_bytes(_pem_key(sa_key))
    pki.sa_pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    pki.token_file.write_text("".join(user.line() + "\n" for user in users))
    for path in (pki.serving_key, pki.sa_key, pki.token_file, folder / "ca.key"):
        path.chmod(0o600)
    return pki


def _load_ca(pki: Pki) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """The stack's CA key and certificate, to sign with."""
    if pki.ca_key is None:
        raise ValueError("this Pki kept no CA key")
    ca_key = serialization.load_pem_private_key(pki.ca_key.read_bytes(), None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise TypeError("the stack's CA key is an EC key")
    ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
    return ca_key, ca_cert


def issue_serving_pair(pki: Pki, name: str, folder: Path) -> tuple[Path, Path]:
    """A serving certificate for ``name`` on 127.0.0.1 (and ``localhost``),
    signed by the stack's CA; returns the paths of the certificate and its key.
    """
    ca_key, ca_cert = _load_ca(pki)
    key, cert = _serving(ca_key, ca_cert, name, ("localhost",))
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / f"{name}.crt", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(_pem_key(key))
    key_path.chmod(0o600)
    return cert_path, key_path


def issue_client_pair(
    pki: Pki, name: str, groups: tuple[str, ...], folder: Path
) -> tuple[Path, Path]:
    """A client certificate for user ``name`` in ``groups`` (its organisations),
    signed by the stack's CA; returns the paths of the certificate and its key.
    """
    ca_key, ca_cert = _load_ca(pki)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject.append(x509.NameAttribute(NameOID.COMMON_NAME, name))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(subject))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / f"{name}.crt", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(_pem_key(key))
    key_path.chmod(0o600)
    return cert_path, key_path
