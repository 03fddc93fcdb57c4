"""The package and its lock: pyproject.toml, uv.lock and the requirements exported from it agree,
and the package built from the checkout serves the app on its own."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# What `make lock` runs (Makefile, EXPORT), and the file each export is written to.
EXPORT = ["export", "--frozen", "--no-hashes", "--no-emit-project", "--no-header", "--quiet"]
EXPORTS = {"requirements.txt": [], "requirements-dev.txt": ["--extra", "dev"]}


def uv() -> str:
    """The pinned uv: the venv's (the Makefile puts it there), else the one on PATH."""
    found = Path(sys.executable).with_name("uv")
    path = str(found) if found.exists() else shutil.which("uv")
    assert path, "uv is missing: install the dev dependencies with `make .venv/.installed-dev`"
    return path


def run_uv(*args: str) -> str:
    done = subprocess.run([uv(), *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_lock_matches_pyproject() -> None:
    # Offline: it compares the lock with pyproject.toml, resolving nothing.
    run_uv("lock", "--check", "--offline")


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_the_requirements_are_exported_from_the_lock(name: str) -> None:
    text = (ROOT / name).read_text()
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    header, body = "".join(lines[:first]), "".join(lines[first:])
    assert "GENERATED from uv.lock by `make lock`" in header
    assert body == run_uv(*EXPORT, *EXPORTS[name]), f"{name} differs from uv.lock: `make lock`"


def test_direct_dependencies_are_pinned() -> None:
    project = PYPROJECT["project"]
    for requirement in [*project["dependencies"], *project["optional-dependencies"]["dev"]]:
        assert "==" in requirement, requirement


def test_the_makefile_installs_the_pinned_uv() -> None:
    pinned = PYPROJECT["tool"]["uv"]["required-version"]
    assert pinned.startswith("==")
    version = run_uv("--version").split()[1]
    assert f"=={version}" == pinned


@pytest.mark.slow  # builds the package: 10-55 s
def test_the_built_package_serves_the_app_without_the_checkout(tmp_path: Path) -> None:
    """`pip install .` gives what the app needs: modules, migrations and the page's files."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "app.py", "cli.py"):
        shutil.copy(ROOT / name, source / name)
    packages = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pattern in packages:
        name = pattern.rstrip("*")
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    run_uv("build", "--wheel", "--quiet", "--out-dir", str(tmp_path / "dist"), str(source))
    (wheel,) = (tmp_path / "dist").glob("chat_backend-*.whl")
    installed = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(installed)  # a pure-Python wheel, installed as pip does
    script = textwrap.dedent(
        """
        import sys
        from app import create_app
        from models.migrate import upgrade
        url = "sqlite:///" + sys.argv[1]
        upgrade(url)
        app = create_app({"DATABASE_URL": url, "SECRET_KEY": "s", "ANTHROPIC_API_KEY": None,
                          "INSTANCE_PATH": sys.argv[2]})
        client = app.test_client()
        assert client.get("/").status_code == 200
        assert client.get("/web/js/main.js").status_code == 200
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/oauth/authorize").status_code == 400  # its page, from a template
        import app as module
        print(module.__file__)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "app.db"), str(tmp_path / "instance")],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(installed / "app.py")
