"""Where and how the REST API listens: TLS files, and the rule that a non-loopback address needs
TLS or authentication."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path

from spark_eos_connect.errors import ConfigError, EosConnectError

LOOPBACK_NAMES = frozenset({"localhost"})
"""Host names taken as loopback besides loopback IP addresses (127.0.0.0/8, ::1)."""


class ExposureError(ConfigError):
    """The API would listen beyond loopback with neither TLS nor authentication."""


class TlsFilesError(ConfigError):
    """The certificate or key cannot be loaded (the message never shows the key's password)."""


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address or ``localhost`` (an empty host binds everything)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, tls: bool, auth: bool) -> list[str]:
    """Refuse a non-loopback `host` with neither TLS nor auth; else the warnings to log."""
    if is_loopback(host):
        return []
    if not tls and not auth:
        raise ExposureError(
            f"refusing to listen on {host or 'every address'!r}, which is not a loopback "
            "address, with neither TLS nor authentication: pass --certfile (and --keyfile) to "
            "serve HTTPS and/or --basic-auth-file to require credentials, or listen on "
            "127.0.0.1"
        )
    if not tls:
        return [f"listening on {host} without TLS: credentials and configs cross it in clear"]
    if not auth:
        return [f"listening on {host} without authentication: anyone reaching it has full access"]
    return []


@dataclass(frozen=True)
class TlsFiles:
    """A PEM certificate chain, its key (None when the certificate file holds it) and the key's
    password (kept out of ``repr``)."""

    certfile: Path
    keyfile: Path | None = None
    password: str | None = field(default=None, repr=False)

    def check(self) -> None:
        """Load the chain and key once, so a bad file fails before the server starts (an
        encrypted key without a password fails too, instead of prompting on the terminal)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.certfile, self.keyfile, self.password or _no_password)
        except ssl.SSLError:
            raise TlsFilesError(
                f"cannot load the TLS certificate and key ({self._files()}): not a PEM "
                "certificate chain and its private key, the key does not match the certificate, "
                "or the key is encrypted and its password is missing or wrong"
            ) from None
        except OSError as error:
            raise TlsFilesError(
                f"cannot load the TLS certificate and key ({self._files()}): {error.strerror}"
            ) from None

    def _files(self) -> str:
        return ", ".join(str(path) for path in (self.certfile, self.keyfile) if path)


def _no_password() -> str:
    return ""


def read_password_file(path: str | Path) -> str:
    """The first line of a password file (without its line break)."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise TlsFilesError(f"cannot read the key password file {path}: {reason}") from None
    return text.splitlines()[0] if text else ""


class PortInUseError(EosConnectError):
    """The REST API's address cannot be bound (another process listens there)."""


def check_port_free(host: str, port: int) -> None:
    """Raise `PortInUseError` naming `host:port` unless a listening socket can be bound there
    now (checked before the server starts, so that nothing claims it started)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise PortInUseError(
                f"cannot listen on {host}:{port}: {error.strerror or error}; choose another "
                "--port or stop what listens there"
            ) from None
