"""The headset server's self-signed TLS certificate: made on first run, kept in the config dir.

The certificate is its own CA (basicConstraints CA=true) so a headset can install and fully
trust it (docs/headset.md); it names localhost, this host's name and its LAN addresses. It is
regenerated when it expires or when the machine's addresses are no longer all covered.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from teleop.core.errors import ConfigError

CERT_NAME, KEY_NAME = "headset-cert.pem", "headset-key.pem"
VALID_DAYS = 365          # Apple devices refuse longer-lived server certificates


def config_dir(override: str | os.PathLike | None = None) -> Path:
    """The user's config dir: ``override``, else $TELEOP_CONFIG_DIR, else $XDG_CONFIG_HOME or
    ~/.config, then ``bidex-teleop``."""
    if override:
        return Path(override)
    if os.environ.get("TELEOP_CONFIG_DIR"):
        return Path(os.environ["TELEOP_CONFIG_DIR"])
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "bidex-teleop"


def local_addresses() -> list[str]:
    """IPv4 addresses of this machine that a headset on the LAN could use (best effort)."""
    found = {"127.0.0.1"}
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))      # no packet is sent: picks the outgoing interface
            found.add(s.getsockname()[0])
    except OSError:
        pass
    try:
        found.update(a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET))
    except OSError:
        pass
    return sorted(found)


@dataclass(frozen=True)
class CertInfo:
    cert_path: Path
    key_path: Path
    fingerprint: str          # SHA-256 of the DER certificate, "AB:CD:..."
    addresses: tuple[str, ...]


def _fingerprint(cert: x509.Certificate) -> str:
    return ":".join(f"{b:02X}" for b in cert.fingerprint(hashes.SHA256()))


def _make(addresses: list[str]) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bidex-teleop headset"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "bidex-teleop (self-signed)")])
    now = dt.datetime.now(dt.UTC)
    sans = [x509.DNSName("localhost"), x509.DNSName(socket.gethostname())]
    sans += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def _usable(cert: x509.Certificate, addresses: list[str]) -> bool:
    if cert.not_valid_after_utc < dt.datetime.now(dt.UTC) + dt.timedelta(days=1):
        return False
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    covered = {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)}
    return set(addresses) <= covered


def ensure_certificate(directory: str | os.PathLike | None = None) -> CertInfo:
    """Load the certificate from the config dir, creating (or renewing) it when needed."""
    folder = config_dir(directory)
    cert_path, key_path = folder / CERT_NAME, folder / KEY_NAME
    addresses = local_addresses()
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes()) if cert_path.exists() else None
    except ValueError as exc:
        raise ConfigError(f"{cert_path}: not a PEM certificate ({exc}); delete it to regenerate") from exc
    if cert is None or not key_path.exists() or not _usable(cert, addresses):
        folder.mkdir(parents=True, exist_ok=True)
        cert_pem, key_pem = _make(addresses)
        # The key is written owner-only before anything else can read it.
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem)
        cert_path.write_bytes(cert_pem)
        cert = x509.load_pem_x509_certificate(cert_pem)
    return CertInfo(cert_path, key_path, _fingerprint(cert), tuple(addresses))
