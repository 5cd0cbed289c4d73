"""What Dagster itself calls stale, asked through its public interfaces: the file observations
through `dagster asset materialize` (an observable source asset's run records an observation),
the staleness through the `dagster-graphql` CLI (the fields the UI reads: `staleStatus`,
`staleCauses`, and per partition `staleStatusByPartition`, `staleCausesByPartition`).

`make run` observes the `files/*` assets as its first step (job `all_assets` names them:
`AssetSelection.all()` leaves observable source assets out), so a changed source file is known to
Dagster once a run has started; to ask before one, observe first: `observe_sources` does, with the
environment `make run` runs in, by the CLI (a code location loaded, ~6 s), and
`observe_in_process` the same by `dagster.materialize`.

One GraphQL document per question (each `dagster-graphql` call loads the code location, ~15 s):
every asset's status, and an aliased `assetNodeOrError` per partitioned asset for its partitions
(`staleStatusByPartition` fails on an asset without partitions, and a partitioned asset's own
`staleStatus` is FRESH whatever its partitions are).

Names are `asset` or `asset[partition]` (asset keys as user strings), as the scenario tests name
the cached steps that worked (tests/scenarios/test_staleness.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
IN_PROCESS = json.dumps({"execution": {"config": {"in_process": {}}}})

CAUSE_FIELDS = "key { path } partitionKey category reason dependency { path } dependencyPartitionKey"


def _bin(name: str) -> str:
    """A console script of the running interpreter's environment (the venv's `dagster`, `dagster-graphql`)."""
    return str(Path(sys.executable).parent / name)


def _user_string(path: list[str]) -> str:
    return "/".join(path)


def _name(asset: str, partition: str | None) -> str:
    return f"{asset}[{partition}]" if partition else asset


def staleness_query(partitioned: Iterable[str]) -> str:
    """The one GraphQL document: every asset node's status and root causes, and each of the
    `partitioned` assets' (user strings) status and causes per partition."""
    parts = [f"assetNodes {{ assetKey {{ path }} isPartitioned isObservable isMaterializable staleStatus staleCauses {{ {CAUSE_FIELDS} }} }}"]
    for i, asset in enumerate(sorted(partitioned)):
        path = json.dumps(asset.split("/"))
        parts.append(
            f"p{i}: assetNodeOrError(assetKey: {{path: {path}}}) {{ __typename ... on AssetNode {{ assetKey {{ path }} partitionKeys "
            f"staleStatusByPartition staleCausesByPartition {{ {CAUSE_FIELDS} }} }} }}"
        )
    return "{ " + " ".join(parts) + " }"


def _cause(raw: dict) -> dict:
    return {
        "asset": _name(_user_string(raw["key"]["path"]), raw.get("partitionKey")),
        "category": raw["category"],
        "reason": raw["reason"],
        **({"dependency": _name(_user_string(raw["dependency"]["path"]), raw.get("dependencyPartitionKey"))} if raw.get("dependency") else {}),
    }


@dataclass
class Staleness:
    """Dagster's status of every asset and partition (`FRESH`, `STALE`, `MISSING`), and the root
    causes it gives for each that is not fresh."""

    status: dict[str, str] = field(default_factory=dict)
    causes: dict[str, list[dict]] = field(default_factory=dict)
    partitions: dict[str, list[str]] = field(default_factory=dict)
    observable: set[str] = field(default_factory=set)

    @property
    def stale(self) -> set[str]:
        return {name for name, status in self.status.items() if status == "STALE"}

    @property
    def missing(self) -> set[str]:
        return {name for name, status in self.status.items() if status == "MISSING"}

    def stale_and_downstream(self, children: Mapping[str, Iterable[str]]) -> set[str]:
        """The stale names and every name below them: what "materialize stale and downstream"
        would select. `children` maps an asset to its child assets; a partitioned child of a
        partition takes the same partition (the benchmark assets' identity mapping), of an
        unpartitioned asset every partition it has."""
        todo, seen = list(self.stale), set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            asset, _, partition = name.partition("[")
            partition = partition.rstrip("]") or None
            for child in children.get(asset, ()):
                if child not in self.partitions:
                    todo.append(child)
                elif partition is not None:
                    todo.append(_name(child, partition))
                else:
                    todo.extend(_name(child, key) for key in self.partitions[child])
        return seen


def read_staleness(response: dict) -> Staleness:
    """A `staleness_query` response as a Staleness; a GraphQL error raises with its messages."""
    if response.get("errors") or not response.get("data"):
        raise RuntimeError(f"the staleness query failed: {json.dumps(response.get('errors'))[:3000]}")
    data = response["data"]
    found = Staleness()
    for node in data["assetNodes"]:
        asset = _user_string(node["assetKey"]["path"])
        if node["isObservable"]:
            found.observable.add(asset)
        if node["isPartitioned"]:
            continue  # Dagster calls a partitioned asset itself FRESH whatever its partitions are: read per partition below
        found.status[asset] = node["staleStatus"]
        if node["staleCauses"]:
            found.causes[asset] = [_cause(c) for c in node["staleCauses"]]
    for alias, node in data.items():
        if alias == "assetNodes":
            continue
        if node.get("__typename") != "AssetNode":
            raise RuntimeError(f"{alias}: no asset node ({node})")
        asset = _user_string(node["assetKey"]["path"])
        found.partitions[asset] = list(node["partitionKeys"])
        for key, status, causes in zip(node["partitionKeys"], node["staleStatusByPartition"], node["staleCausesByPartition"], strict=True):
            found.status[_name(asset, key)] = status
            if causes:
                found.causes[_name(asset, key)] = [_cause(c) for c in causes]
    return found


def _environment(env: Mapping[str, str]) -> dict[str, str]:
    return {**os.environ, **env}


def observe_sources(env: Mapping[str, str], file_assets: Iterable[str], cwd: Path = REPO_ROOT, partitioned: Iterable[str] = (),
                    partitions: Iterable[str] = ()) -> None:
    """Observe the `file_assets` (user strings, `files/<table>`) as `dagster asset materialize`
    does: one run of the implicit asset job in `env`'s instance (DAGSTER_HOME), in one process,
    which records each file's SHA-256 as its data version; those among them that are
    `partitioned` (the benchmark files), one such run per partition of `partitions`: the CLI takes
    no range of an asset without a single-run backfill policy, which an observable has not.
    Raises if a run fails."""
    file_assets, partitioned = set(file_assets), set(partitioned)
    runs = [(sorted(file_assets - partitioned), [])] + [(sorted(file_assets & partitioned), ["--partition", key]) for key in partitions if file_assets & partitioned]
    for selected, partition in runs:
        command = [_bin("dagster"), "asset", "materialize", "-m", "workbank_dagster.definitions", "--select", ",".join(selected),
                   *partition, "--config-json", IN_PROCESS]
        completed = subprocess.run(command, cwd=cwd, env=_environment(env), capture_output=True, text=True, timeout=600)
        if completed.returncode != 0:
            raise RuntimeError(f"observing the source files failed: {completed.stderr[-3000:]}{completed.stdout[-3000:]}")


def observe_in_process(env: Mapping[str, str]) -> None:
    """Observe every `files/*` asset as `observe_sources` does, in this process (a second, not a
    code location's start-up): `dagster.materialize` of the observable assets, selected by key,
    records the same observation events in `env`'s instance (1.13 does not export
    `dagster.observe`), each file resolved with the settings `env` gives (`PipelineSettings.from_env`)."""
    import dagster as dg

    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.sources.assets import file_assets
    from workbank_dagster.sources.benchmark_assets import benchmark_prompt_files, benchmark_result_files

    environment = _environment(env)
    observable = [*file_assets, benchmark_prompt_files, benchmark_result_files]  # the last two: one version per benchmark partition
    keys = [*(key for assets in file_assets for key in assets.keys), benchmark_prompt_files.key, benchmark_result_files.key]
    with dg.DagsterInstance.from_config(environment["DAGSTER_HOME"]) as instance:
        result = dg.materialize(observable, instance=instance, selection=keys, resources={"pipeline_settings": PipelineSettings.from_env(environment)})
        observed = {event.asset_key for event in result.all_events if event.event_type == dg.DagsterEventType.ASSET_OBSERVATION}
    if not result.success or observed != set(keys):
        raise RuntimeError(f"observing the source files failed (observed {len(observed)} of {len(keys)})")


def query_staleness(env: Mapping[str, str], partitioned: Iterable[str], cwd: Path = REPO_ROOT) -> Staleness:
    """Dagster's staleness of every asset and partition, by one `dagster-graphql` call on the
    workspace of `cwd` (its workspace.yaml: the code location `make run` runs there) against
    `env`'s instance."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "response.json"
        command = [_bin("dagster-graphql"), "-w", str(cwd / "workspace.yaml"), "-o", str(output), "-t", staleness_query(partitioned)]
        completed = subprocess.run(command, cwd=cwd, env=_environment(env), capture_output=True, text=True, timeout=600)
        if completed.returncode != 0 or not output.is_file():
            raise RuntimeError(f"dagster-graphql failed: {completed.stderr[-3000:]}{completed.stdout[-3000:]}")
        return read_staleness(json.loads(output.read_text()))


def asset_children(defs) -> dict[str, list[str]]:
    """Each asset's child assets (user strings), from the definitions' asset graph."""
    graph = defs.resolve_asset_graph()
    return {key.to_user_string(): sorted(child.to_user_string() for child in graph.get(key).child_keys) for key in graph.get_all_asset_keys()}


def partitioned_assets(defs) -> list[str]:
    graph = defs.resolve_asset_graph()
    return sorted(key.to_user_string() for key in graph.get_all_asset_keys() if graph.get(key).is_partitioned)


def file_assets(defs) -> list[str]:
    """The observable source assets that `make run`'s job observes (`files/<table>`, the benchmark
    files): not the audit files, which `make run` reports without a run before it asks about the
    audits (runner.run_audits), each partition its own (partitioned by audit, not by benchmark)."""
    from workbank_dagster.audits.assets import AUDIT_FILES

    graph = defs.resolve_asset_graph()
    return sorted(key.to_user_string() for key in graph.get_all_asset_keys() if graph.get(key).is_observable and key != AUDIT_FILES)


def compare(staleness: Staleness, worked: set[str], kept: set[str], children: Mapping[str, Iterable[str]]) -> dict:
    """Dagster's staleness before a run against what the run's cached steps did: over the cached
    steps (the names that recorded worked or kept), stale-but-kept and worked-but-not-stale, each
    with Dagster's root causes for the stale ones; and the same against the stale names with
    everything downstream of them."""
    cached = worked | kept
    stale = staleness.stale & cached
    closure = staleness.stale_and_downstream(children) & cached
    return {
        "stale": sorted(staleness.stale),
        "stale_cached": sorted(stale),
        "worked": sorted(worked),
        "stale_but_kept": sorted(stale - worked),
        "worked_but_not_stale": sorted(worked - stale),
        "agree": stale == worked,
        "stale_and_downstream_but_kept": sorted(closure - worked),
        "worked_but_not_stale_or_downstream": sorted(worked - closure),
        "stale_not_cached": sorted(staleness.stale - cached),
        "causes": {name: staleness.causes.get(name, []) for name in sorted(stale - worked)},
    }
