"""Where the REST API may listen: loopback freely, anywhere else only with TLS or basic auth;
TLS files are loaded up front with errors that name the files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.rest.listen import (
    ExposureError,
    TlsFiles,
    TlsFilesError,
    check_exposure,
    is_loopback,
    read_password_file,
)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST", " 127.0.0.1"]
)
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)
    assert check_exposure(host, tls=False, auth=False) == []


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "10.1.2.3", "example.com", "localhost.ex"])
def test_other_hosts_are_refused_with_neither_tls_nor_auth(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ExposureError) as caught:
        check_exposure(host, tls=False, auth=False)
    message = str(caught.value)
    assert "not a loopback address" in message
    for option in ("--certfile", "--keyfile", "--basic-auth-file", "127.0.0.1"):
        assert option in message
    assert isinstance(caught.value, ConfigError)


def test_other_hosts_are_accepted_with_tls_or_auth_with_a_warning_for_what_is_missing() -> None:
    assert check_exposure("0.0.0.0", tls=True, auth=True) == []
    (no_tls,) = check_exposure("0.0.0.0", tls=False, auth=True)
    assert "without TLS" in no_tls
    (no_auth,) = check_exposure("0.0.0.0", tls=True, auth=False)
    assert "without authentication" in no_auth


def test_password_file_first_line(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_text("s3cret \nignored\n")
    assert read_password_file(path) == "s3cret "
    path.write_text("")
    assert read_password_file(path) == ""
    with pytest.raises(TlsFilesError, match="cannot read the key password file"):
        read_password_file(tmp_path / "missing")


def self_signed(folder: Path, password: str | None = None) -> tuple[Path, Path]:
    """A throwaway self-signed certificate and key (encrypted with `password` if given)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-days", "1", "-subj", "/CN=x"]
    command += ["-keyout", str(key), "-out", str(cert)]
    command += ["-passout", f"pass:{password}"] if password else ["-noenc"]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    return cert, key


def test_tls_files_load_or_fail_naming_the_files(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    TlsFiles(cert, key).check()
    with pytest.raises(TlsFilesError, match="cannot load the TLS certificate and key") as caught:
        TlsFiles(cert, tmp_path / "missing.pem").check()
    assert "missing.pem" in str(caught.value)
    with pytest.raises(TlsFilesError):
        TlsFiles(key, cert).check()


def test_encrypted_key_needs_its_password(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, password="kii-pass")
    TlsFiles(cert, key, "kii-pass").check()
    with pytest.raises(TlsFilesError) as caught:
        TlsFiles(cert, key, "wrong-pass").check()
    assert "wrong-pass" not in str(caught.value)
    assert "password is missing or wrong" in str(caught.value)
    with pytest.raises(TlsFilesError, match="password is missing or wrong"):
        TlsFiles(cert, key).check()  # fails instead of prompting on the terminal
    assert "kii-pass" not in repr(TlsFiles(cert, key, "kii-pass"))
