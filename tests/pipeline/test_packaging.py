"""The project builds without a deprecation warning from its own metadata.

setuptools deprecated `project.license` as a TOML table ("By 2027-Feb-18, you need to update your
project ... or your builds will no longer be supported"): the license is an SPDX string with
`license-files`, and the build needs setuptools >= 77, which reads them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib

from workbank_dagster.settings import REPO_ROOT

# What setuptools says of metadata it is dropping: its warning classes and the word itself.
DEPRECATION = re.compile(r"SetuptoolsDeprecationWarning|BuildBackendWarning|deprecat", re.IGNORECASE)


def test_the_build_warns_of_nothing_deprecated_in_the_project_s_metadata(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO_ROOT / name, source / name)
    shutil.copytree(REPO_ROOT / "workbank_dagster", source / "workbank_dagster", ignore=shutil.ignore_patterns("__pycache__"))
    # The installed setuptools (>= 77, as the build requires), without fetching a build environment.
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", str(source), "-w", str(tmp_path / "wheel")],
        capture_output=True, text=True, timeout=600,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-3000:]
    assert [line for line in output.splitlines() if DEPRECATION.search(line)] == []
    metadata = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert metadata["project"]["license"] == "MIT" and metadata["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in metadata["build-system"]["requires"]
    assert (REPO_ROOT / "LICENSE").read_text().startswith("MIT License")
    assert list((tmp_path / "wheel").glob("workbank_dagster-*.whl"))
