"""The Dagster webserver, started as `make ui` would, answers GraphQL with the whole asset graph
(every asset, its group and its upstream lineage) and launches a materialization that succeeds.

The webserver runs in its own process group with an isolated DAGSTER_HOME, a fresh data dir and a
source folder with three small benchmarks; its log is kept as test-artifacts/webserver.log.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
import pytest
from conftest import ARTIFACTS, small_source_dir

from workbank_dagster.dagster_instance import DAGSTER_YAML
from workbank_dagster.settings import REPO_ROOT

GROUPS = {"sources", "labeling", "transform", "analysis", "report"}
# A cheap, unpartitioned asset that writes to the warehouse (SOC major groups: 23 rows).
TARGET = ["raw", "soc_major_groups"]
STARTUP_TIMEOUT_S = 120
RUN_TIMEOUT_S = 180

# The instance's default run coordinator is the queued one, which needs `dagster-daemon` to start
# runs (`make ui` runs `dagster dev`, which starts the daemon). The bare webserver launches runs
# itself with the default coordinator; the rest is the instance `make run` / `make ui` write.
TEST_DAGSTER_YAML = DAGSTER_YAML + """\
run_coordinator:
  module: dagster._core.run_coordinator
  class: DefaultRunCoordinator
"""

WORKSPACE_QUERY = """
query {
  workspaceOrError {
    __typename
    ... on Workspace {
      locationEntries {
        name
        loadStatus
        locationOrLoadError {
          __typename
          ... on RepositoryLocation { name repositories { name } }
          ... on PythonError { message stack }
        }
      }
    }
    ... on PythonError { message stack }
  }
}
"""

ASSET_NODES_QUERY = """
query {
  assetNodes {
    assetKey { path }
    groupName
    dependencyKeys { path }
    description
    kinds
    owners { __typename ... on TeamAssetOwner { team } ... on UserAssetOwner { email } }
    isMaterializable
    isObservable
    isPartitioned
    jobNames
    repository { name location { name } }
  }
}
"""

LAUNCH_RUN_MUTATION = """
mutation LaunchRun($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId status } }
    ... on PipelineNotFoundError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message path reason } }
    ... on InvalidStepError { invalidStepKey }
    ... on InvalidOutputError { stepKey invalidOutputName }
    ... on RunConflict { message }
    ... on ConflictingExecutionParamsError { message }
    ... on PresetNotFoundError { message }
    ... on UnauthorizedError { message }
    ... on NoModeProvidedError { message }
    ... on PythonError { message stack }
  }
}
"""

RUN_QUERY = """
query Run($runId: ID!) {
  runOrError(runId: $runId) {
    __typename
    ... on Run { runId status jobName assetSelection { path } }
    ... on RunNotFoundError { message }
    ... on PythonError { message }
  }
}
"""

LOGS_QUERY = """
query Logs($runId: ID!, $cursor: String) {
  logsForRun(runId: $runId, afterCursor: $cursor, limit: 1000) {
    __typename
    ... on EventConnection {
      cursor
      hasMore
      events {
        __typename
        ... on MessageEvent { message level stepKey eventType }
        ... on ErrorEvent { error { className message stack causes { className message stack } } }
      }
    }
    ... on RunNotFoundError { message }
    ... on PythonError { message }
  }
}
"""

MATERIALIZATIONS_QUERY = """
query Materializations($assetKey: AssetKeyInput!) {
  assetOrError(assetKey: $assetKey) {
    __typename
    ... on Asset {
      assetMaterializations(limit: 10) {
        runId
        timestamp
        metadataEntries { label ... on IntMetadataEntry { intRepr } }
      }
    }
    ... on AssetNotFoundError { message }
  }
}
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Webserver:
    def __init__(self, process: subprocess.Popen, port: int, log: Path):
        self.process = process
        self.base = f"http://127.0.0.1:{port}"
        self.log = log

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def graphql(self, query: str, variables: dict | None = None, timeout: float = 60) -> dict:
        request = urllib.request.Request(
            f"{self.base}/graphql",
            data=json.dumps({"query": query, "variables": variables or {}}).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"GraphQL HTTP {exc.code}: {exc.read()[:3000]!r}") from exc
        assert not body.get("errors"), f"GraphQL errors: {json.dumps(body['errors'], indent=1)[:5000]}"
        return body["data"]

    def wait_until_up(self, timeout: float) -> None:
        """Until /server_info answers and the code location has loaded (or failed to load)."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, f"webserver exited with {self.process.returncode}:\n{self.log_tail()}"
            assert time.monotonic() < deadline, f"webserver not up after {timeout:.0f} s:\n{self.log_tail()}"
            try:
                with urllib.request.urlopen(f"{self.base}/server_info", timeout=5) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.5)
        while True:
            assert self.process.poll() is None, f"webserver exited with {self.process.returncode}:\n{self.log_tail()}"
            assert time.monotonic() < deadline, f"code location not loaded after {timeout:.0f} s:\n{self.log_tail()}"
            workspace = self.graphql(WORKSPACE_QUERY)["workspaceOrError"]
            assert workspace["__typename"] == "Workspace", workspace
            entries = workspace["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                for entry in entries:
                    loaded = entry["locationOrLoadError"]
                    assert loaded and loaded["__typename"] == "RepositoryLocation", f"code location {entry['name']} failed to load: {loaded}"
                return
            time.sleep(1)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        # The code server and run workers are children in the same process group.
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)


@pytest.fixture()
def webserver(workbank_env, tmp_path, reduced_source_dir, monkeypatch):
    sources = small_source_dir(tmp_path, reduced_source_dir)
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", str(sources))
    home = Path(os.environ["DAGSTER_HOME"])  # tmp_path/dagster_home, created by workbank_env
    (home / "dagster.yaml").write_text(TEST_DAGSTER_YAML)
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONUNBUFFERED": "1",
    }
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / "webserver.log"
    port = _free_port()
    executable = Path(sys.executable).parent / "dagster-webserver"
    command = [str(executable), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"]
    with log_path.open("w") as log:
        log.write(f"$ {' '.join(command)}  (cwd {REPO_ROOT}, DAGSTER_HOME {home})\n")
        log.flush()
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = Webserver(process, port, log_path)
    try:
        server.wait_until_up(STARTUP_TIMEOUT_S)
        yield server
    finally:
        server.stop()


def _key(path: list[str]) -> str:
    return "/".join(path)


def _run_events(server: Webserver, run_id: str) -> list[dict]:
    events, cursor = [], None
    while True:
        logs = server.graphql(LOGS_QUERY, {"runId": run_id, "cursor": cursor})["logsForRun"]
        if logs["__typename"] != "EventConnection":
            return [{"message": f"logsForRun: {logs}"}]
        events.extend(logs["events"])
        cursor = logs["cursor"]
        if not logs["hasMore"]:
            return events


def _describe_events(events: list[dict]) -> str:
    lines = []
    for event in events:
        kind = event.get("eventType") or event.get("__typename", "")
        lines.append(f"{event.get('level', '')} {kind} {event.get('stepKey') or ''}: {event.get('message', '')}")
        error = event.get("error")
        # The user's exception is the innermost cause; its stack ends in the asset's own code.
        for part in [error, *error["causes"]] if error else []:
            lines.append(f"  {part.get('className')}: {part['message'].strip()}\n" + "".join(part["stack"][-4:]))
    return "\n".join(lines)[-12000:]


def test_webserver_serves_the_asset_graph_and_materializes_an_asset(webserver, workbank_env):
    from workbank_dagster.definitions import defs

    graph = defs.resolve_asset_graph()
    expected = {_key(k.path): graph.get(k) for k in graph.get_all_asset_keys()}

    # Every asset, with its group and upstream keys, as the in-process graph has them.
    nodes = webserver.graphql(ASSET_NODES_QUERY)["assetNodes"]
    served = {_key(n["assetKey"]["path"]): n for n in nodes}
    assert len(served) == len(nodes), "an asset key is served twice"
    assert set(served) == set(expected), f"missing: {sorted(set(expected) - set(served))}; extra: {sorted(set(served) - set(expected))}"
    for key, node in served.items():
        assert node["groupName"] == expected[key].group_name, key
        assert node["groupName"] in GROUPS, key
        upstream = {_key(d["path"]) for d in node["dependencyKeys"]}
        assert upstream == {_key(p.path) for p in expected[key].parent_keys}, key
    assert {n["groupName"] for n in nodes} == GROUPS
    # Spot-check the lineage the README draws: files -> raw -> staging -> marts -> report.
    assert "files/soc_major_groups" in {_key(d["path"]) for d in served[_key(TARGET)]["dependencyKeys"]}
    assert "raw/benchmark_prompts" in {_key(d["path"]) for d in served["staging/stg_benchmarks__prompts"]["dependencyKeys"]}
    assert "marts/fct_task_coverage" in {_key(d["path"]) for d in served["report/headline"]["dependencyKeys"]}
    assert served["files/soc_major_groups"]["isObservable"] and not served["files/soc_major_groups"]["isMaterializable"]
    assert served["raw/benchmark_prompts"]["isPartitioned"]

    # Launch a materialization of one source table through GraphQL, in the implicit asset job.
    target = served[_key(TARGET)]
    assert target["isMaterializable"] and not target["isPartitioned"]
    asset_jobs = [name for name in target["jobNames"] if name.startswith("__ASSET_JOB")]
    assert asset_jobs, target["jobNames"]
    selector = {
        "repositoryLocationName": target["repository"]["location"]["name"],
        "repositoryName": target["repository"]["name"],
        "jobName": asset_jobs[0],
        "assetSelection": [{"path": TARGET}],
    }
    launched = webserver.graphql(LAUNCH_RUN_MUTATION, {"executionParams": {"selector": selector, "mode": "default", "executionMetadata": {"tags": [{"key": "workbank/trigger", "value": "test_webserver"}]}}})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]

    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        run = webserver.graphql(RUN_QUERY, {"runId": run_id})["runOrError"]
        assert run["__typename"] == "Run", run
        if run["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        assert time.monotonic() < deadline, f"run {run_id} still {run['status']} after {RUN_TIMEOUT_S} s:\n{_describe_events(_run_events(webserver, run_id))}\n{webserver.log_tail()}"
        time.sleep(1)
    assert run["status"] == "SUCCESS", f"run {run_id} {run['status']}:\n{_describe_events(_run_events(webserver, run_id))}\n{webserver.log_tail(3000)}"
    assert run["assetSelection"] == [{"path": TARGET}]

    # The materialization is recorded by the instance the webserver reads...
    asset = webserver.graphql(MATERIALIZATIONS_QUERY, {"assetKey": {"path": TARGET}})["assetOrError"]
    assert asset["__typename"] == "Asset", asset
    ours = [m for m in asset["assetMaterializations"] if m["runId"] == run_id]
    assert len(ours) == 1, asset["assetMaterializations"]
    metadata = {e["label"]: e.get("intRepr") for e in ours[0]["metadataEntries"]}
    row_count = int(metadata["dagster/row_count"])

    # ...and the table is in the warehouse of this test's data dir, with those rows.
    db = workbank_env / "warehouse.duckdb"
    assert db.exists(), f"no warehouse at {db}"
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(f"select count(*) from {TARGET[0]}.{TARGET[1]}").fetchone()[0]
        families = {r[0] for r in con.execute(f"select family_code from {TARGET[0]}.{TARGET[1]}").fetchall()}
    finally:
        con.close()
    assert rows == row_count == 23
    assert "55-0000" in families and "15-0000" in families
