"""A kubeconfig that names a cluster nobody runs: enough for dagster-k8s to build its API clients."""

from __future__ import annotations

from pathlib import Path

import yaml


def kubeconfig_stub(path: Path) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "test", "cluster": {"server": "https://127.0.0.1:6443"}}],
                "users": [{"name": "test", "user": {"token": "test"}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
                "current-context": "test",
            }
        )
    )
    return path
