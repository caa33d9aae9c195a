"""The shipped config providers: env, file, directory, with Connect's params."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.config_providers import (
    PROVIDER_CLASS_ALIASES,
    SHIPPED_PROVIDERS,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
)

SECRET = "s3cr3t-planted-value"


def test_file_provider_reads_the_asked_keys_of_a_properties_file(tmp_path: Path) -> None:
    file = tmp_path / "db.properties"
    file.write_text(f"user=app\npassword={SECRET}\nother=x\n")

    provider = FileConfigProvider()
    provider.configure({})

    assert provider.get(str(file), {"user", "password", "absent"}) == {
        "user": "app",
        "password": SECRET,
    }
    assert provider.get("", {"user"}) == {}


def test_file_provider_unreadable_file_names_the_path_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read .*missing\.properties: No such file"):
        FileConfigProvider().get(str(tmp_path / "missing.properties"), {"k"})
    with pytest.raises(ConfigError, match="Is a directory"):
        FileConfigProvider().get(str(tmp_path), {"k"})


def test_file_provider_allowed_paths(tmp_path: Path) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir(), other.mkdir()
    (allowed / "a.properties").write_text("k=v\n")
    (other / "b.properties").write_text("k=w\n")
    provider = FileConfigProvider()
    provider.configure({"allowed.paths": f"{allowed}, /nowhere"})

    assert provider.get(str(allowed / "a.properties"), {"k"}) == {"k": "v"}
    with pytest.raises(ConfigError, match=r"is not under allowed\.paths"):
        provider.get(str(allowed / ".." / "other" / "b.properties"), {"k"})
    with pytest.raises(ConfigError, match="absolute"):
        FileConfigProvider().configure({"allowed.paths": "relative/dir"})


def test_directory_provider_reads_whole_files_by_name(tmp_path: Path) -> None:
    (tmp_path / "password").write_text(SECRET + "\n")
    (tmp_path / "sub").mkdir()
    (tmp_path.parent / "outside").write_text("nope")

    provider = DirectoryConfigProvider()
    answer = provider.get(str(tmp_path), {"password", "sub", "absent", "../outside"})

    assert answer == {"password": SECRET + "\n"}
    with pytest.raises(ConfigError, match="not a readable directory"):
        provider.get(str(tmp_path / "password"), {"x"})


def test_env_provider_reads_allowed_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOS_TEST_TOKEN", SECRET)
    monkeypatch.setenv("OTHER_TOKEN", "x")
    provider = EnvVarConfigProvider()

    assert provider.get("", {"EOS_TEST_TOKEN", "EOS_UNSET"}) == {"EOS_TEST_TOKEN": SECRET}
    provider.configure({"allowlist.pattern": "EOS_.*"})
    assert provider.get("", {"EOS_TEST_TOKEN", "OTHER_TOKEN"}) == {"EOS_TEST_TOKEN": SECRET}
    with pytest.raises(ConfigError, match="takes no path"):
        provider.get("/some/path", {"EOS_TEST_TOKEN"})
    with pytest.raises(ConfigError, match="not a valid regex"):
        provider.configure({"allowlist.pattern": "("})


def test_names_follow_connect() -> None:
    assert list(SHIPPED_PROVIDERS) == ["env", "file", "directory"]
    java = "org.apache.kafka.common.config.provider."
    assert PROVIDER_CLASS_ALIASES[java + "FileConfigProvider"] == SHIPPED_PROVIDERS["file"]
    assert PROVIDER_CLASS_ALIASES["EnvVarConfigProvider"] == SHIPPED_PROVIDERS["env"]
    assert (
        PROVIDER_CLASS_ALIASES[java + "DirectoryConfigProvider"] == (SHIPPED_PROVIDERS["directory"])
    )
