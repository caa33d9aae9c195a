"""Build the project as `make dist` does, and install the wheel into a fresh venv that works
offline: the wheel goes in with `--no-deps`, and the venv borrows the already installed
dependencies from this interpreter's site-packages through a `.pth` line (whose own `.pth`
files, the editable install's among them, are not processed)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

from ..docs.readme import REPO, make_targets


def dist_recipe() -> list[str]:
    """The `make dist` recipe lines."""
    return make_targets((REPO / "Makefile").read_text())["dist"][1]


def build_command(outdir: Path, *only: str) -> list[str]:
    """`make dist`'s `python -m build` line writing to `outdir` (`only`: e.g. `--wheel`)."""
    [build] = [line for line in dist_recipe() if " -m build " in line]
    argv = shlex.split(build)
    assert argv[:3] == ["$(PY)", "-m", "build"] and argv[-1] == ".", build
    at = argv.index("--outdir")
    argv[at + 1] = str(outdir)
    return [sys.executable, *argv[1:-1], *only, str(REPO)]


def build(outdir: Path, *only: str) -> list[Path]:
    """Run the build; the files it made."""
    result = subprocess.run(
        build_command(outdir, *only), capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return sorted(outdir.iterdir())


def only_wheel(files: list[Path]) -> Path:
    [wheel] = [f for f in files if f.suffix == ".whl"]
    return wheel


def fresh_venv(target: Path, wheel: Path) -> Path:
    """A new venv with `wheel` installed; returns its `bin` folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    python = target / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    subprocess.run([*install, "--no-deps", "--no-index", str(wheel)], check=True, timeout=300)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = target / "lib" / version / "site-packages"
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return target / "bin"
