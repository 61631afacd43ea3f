"""The local Ray cluster (tests/remote/ray_cluster.py) for this folder's tests, started
once: head with no CPUs, one worker node with two slots, loopback, stopped at the end.
The worker node's own environment holds the API key the steps use (`CLUSTER_KEY`) and
the PYTHONPATH of this checkout; skipped with the reason where `ray` is not installed."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ray_cluster import CLUSTER_KEY, Cluster, local_cluster, skip_reason

import coder_ls


@pytest.fixture(scope="package")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    reason = skip_reason()
    if reason:
        print(f"\nskipped: {reason}")
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("worker-home")
    env = {
        "PYTHONPATH": str(Path(coder_ls.__file__).parent.parent),
        "CODER_TEST_CLUSTER_KEY": CLUSTER_KEY,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    with local_cluster(2, env) as cluster:
        yield cluster
