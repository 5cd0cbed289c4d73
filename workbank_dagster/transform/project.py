"""The dbt project as Dagster runs it: DbtProject, the CLI resource, the manifest, the profiles, the
`--vars`, the build folders (how Dagster sees each node: translator.py)."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import yaml
from dagster_dbt import DbtCliResource, DbtProject
from dagster_dbt.dbt_project import DbtProjectPreparer
from packaging import version

from ..atomic import write_text
from ..fingerprint import fingerprint
from ..settings import DBT_PROJECT_DIR, Settings, settings_at_load
from .translator import translator


def dbt_executable() -> str:
    """The `dbt` beside this interpreter: Dagster may run from .venv/bin without the venv on PATH."""
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


class DbtCli(DbtCliResource):
    """dagster-dbt's resource without two start-up costs it pays before every `dbt build`.

    - The dbt version: dagster-dbt runs `dbt --version` (about 4 s here: dbt also asks PyPI for
      the latest release). The `dbt` beside this interpreter belongs to the installed dbt-core, so
      its version is read from the package metadata instead; any other executable is still asked.
    - An in-process dbt adapter (about 2.5 s: profile, project and macros loaded again). dagster-dbt
      uses it only for `fetch_row_counts()` / `fetch_column_metadata()`, which this project does not
      call: it reads row counts and columns itself once dbt has exited (`transform/metadata.py`).

    Both override private members of the pinned dagster-dbt 0.29.x; `tests/transform/test_definitions.py` checks
    that they still exist and that the version matches what `dbt --version` prints.
    """

    @property
    def _cli_version(self) -> version.Version:
        if Path(self.dbt_executable) == Path(sys.executable).with_name("dbt"):
            return version.parse(importlib.metadata.version("dbt-core"))
        return DbtCliResource._cli_version.func(self)  # the cached_property's function: ask the executable

    def _initialize_dbt_core_adapter(self, args):
        return None


dbt_project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR)


def project_files() -> list[Path]:
    """The dbt project's own files, in a fixed order: what a parse and a build read of it."""
    files = [DBT_PROJECT_DIR / "dbt_project.yml", DBT_PROJECT_DIR / "profiles.yml"]
    for folder in ("models", "macros", "tests"):
        files.extend(sorted(p for p in (DBT_PROJECT_DIR / folder).rglob("*") if p.is_file()))
    return files


def project_inputs() -> list:
    """What the dbt project is, as a cached step's key takes it: its files' names (relative to the
    project) and contents, and the dbt-core version. The manifest is made from these, but holds
    absolute paths: keyed on it, a checkout in another folder would look changed."""
    files = project_files()
    return [[str(p.relative_to(DBT_PROJECT_DIR)) for p in files], *files, importlib.metadata.version("dbt-core")]


def project_digest() -> str:
    """The dbt project as one SHA-256 (`project_inputs`: its files and the dbt-core version): the
    stamp of the data dictionary's code version, which `dbt docs generate` makes from every file of
    the project (report/assets.data_dictionary_asset)."""
    return fingerprint(code="", inputs=project_inputs())


MANIFEST_KEY_FILE = "manifest.inputs_sha256"


def manifest_key() -> str:
    """What the manifest is parsed from (`project_inputs`: the project's files by name and content,
    and the dbt-core version), as one SHA-256."""
    digest = hashlib.sha256()
    names, *files, version = project_inputs()
    digest.update(json.dumps([names, version]).encode())
    for path in files:
        digest.update(path.read_bytes() + b"\x1f")
    return digest.hexdigest()


def _parsed_from(manifest: Path, key: str) -> bool:
    """The manifest is there and was parsed from `key`: not its age, which misses a renamed or
    deleted file, but what it was made from (its key, written beside it after each parse)."""
    recorded = manifest.with_name(MANIFEST_KEY_FILE)
    return manifest.exists() and recorded.exists() and recorded.read_text().strip() == key


def ensure_manifest() -> Path:
    """Run `dbt parse` when the manifest is missing or was parsed from other project files (`manifest_key`).

    Several processes may import the definitions at once (the webserver's code server, a run, a
    test): one parses at a time (a file lock), into a folder of its own, and the manifest and
    dbt's partial-parse file are moved into place whole, so no process reads a half-written one.
    """
    manifest = dbt_project.manifest_path
    key = manifest_key()
    if _parsed_from(manifest, key):
        return manifest
    target = manifest.parent
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".parse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _parsed_from(manifest, key):  # another process parsed while this one waited
            return manifest
        # Parse with the vars and warehouse path `dbt build` will use: dbt's partial parsing (which
        # dagster-dbt copies into each build's target folder) is only reused when they match.
        settings = settings_at_load().resolve()
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        with tempfile.TemporaryDirectory(prefix="parse-", dir=target) as scratch:
            completed = subprocess.run(
                [dbt_executable(), "parse", "--project-dir", str(DBT_PROJECT_DIR), "--profiles-dir", str(profiles_dir_for(settings)), "--quiet",
                 "--target-path", scratch, *dbt_vars_args(settings)],
                cwd=DBT_PROJECT_DIR,
                env=env,
                capture_output=True,
                text=True,
            )
            if completed.returncode != 0:
                raise RuntimeError(f"dbt parse failed:\n{completed.stdout}\n{completed.stderr}")
            for name in ("partial_parse.msgpack", "manifest.json"):
                if (Path(scratch) / name).exists():
                    os.replace(Path(scratch) / name, target / name)
            # The key last: it marks the parse done (a crash before it leaves the manifest to parse again).
            write_text(target / MANIFEST_KEY_FILE, key + "\n")
    return manifest


class KeyedManifestPreparer(DbtProjectPreparer):
    """dagster-dbt's preparer interface over `ensure_manifest`: `prepare` parses when the manifest's
    key differs (dagster-dbt's own preparer parses every time), `prepare_if_dev` does it only under
    `dagster dev` (`make ui`, `make ui-team`), as dagster-dbt's does."""

    def prepare(self, project: DbtProject) -> None:
        assert project.manifest_path == dbt_project.manifest_path, "one dbt project"
        ensure_manifest()

    def prepare_if_dev(self, project: DbtProject) -> None:
        if self.using_dagster_dev():
            self.prepare(project)


preparer = KeyedManifestPreparer()


class ManifestNotPrepared(RuntimeError):
    """The definitions loaded outside `dagster dev` with no manifest parsed from these project files."""


def prepared_manifest() -> Path:
    """The manifest, as the definitions load it: parsed beforehand, never at import time.

    `cli run`, `cli label-llm`, `cli prepare`, the test session and the image build prepare it
    (`ensure_manifest`); under `dagster dev` the preparer parses it here if it must, so an edited
    model reaches the UI on reload. Anywhere else (a bare `dagster` command, a deployed code
    location), a manifest parsed from other project files is an error that says what to run, not a
    `dbt parse` hidden in an import."""
    preparer.prepare_if_dev(dbt_project)
    manifest = dbt_project.manifest_path
    if not _parsed_from(manifest, manifest_key()):
        raise ManifestNotPrepared(
            f"the dbt manifest {manifest} is missing or was parsed from other dbt project files than these. "
            "Prepare it with `python -m workbank_dagster.cli prepare` (`make run`, `make ui` and `make test` prepare it themselves)."
        )
    return manifest


def dbt_vars_args(settings: Settings) -> list[str]:
    """The pipeline's settings as dbt `--vars`, spelled the same for parse, build and docs."""
    return ["--vars", json.dumps(settings.dbt_vars, sort_keys=True)]


def dbt_unit_test_args(settings: Settings) -> list[str]:
    """`dbt test` of the unit tests only (they read the column types of a built warehouse)."""
    return ["test", *dbt_vars_args(settings), "--resource-type", "unit_test"]


# The committed profile's two run-time values, as it spells them: a dbt command run by hand in
# dbt_project/ reads them from the environment; the pipeline writes them into a profile of its own.
PROFILE_TEMPLATE = DBT_PROJECT_DIR / "profiles.yml"
PROFILE_VALUES = {
    "{{ env_var('WORKBANK_DUCKDB_PATH') }}": "warehouse",
    "{{ env_var('WORKBANK_PARTITIONS_DIR') }}": "partitions",
}


def rendered_profile(warehouse_path: Path | str, partitions_dir: Path | str, template: str | None = None) -> str:
    """dbt_project/profiles.yml (or `template`) with the warehouse file and the partition files'
    folder written in (every other value, a shared target's `env_var()`s among them, as it has it)."""
    values = {"warehouse": str(warehouse_path), "partitions": str(partitions_dir)}

    def fill(node):
        if isinstance(node, dict):
            return {key: fill(value) for key, value in node.items()}
        if isinstance(node, list):
            return [fill(value) for value in node]
        return values[PROFILE_VALUES[node]] if isinstance(node, str) and node in PROFILE_VALUES else node

    profile = fill(yaml.safe_load(PROFILE_TEMPLATE.read_text() if template is None else template))
    header = "# Written by workbank_dagster/transform/project.py from dbt_project/profiles.yml, for one warehouse file.\n"
    return header + yaml.safe_dump(profile, sort_keys=False)


def profiles_dir_for(settings: Settings, warehouse_path: Path | str | None = None, partitions_dir: Path | str | None = None) -> Path:
    """A profiles folder whose profiles.yml points dbt at `warehouse_path` (default: the settings')
    and at the partition files in `partitions_dir` (default: the settings'), under
    data_dir/dbt_profiles/, named by its content: a run gives it to
    `DbtCliResource(profiles_dir=...)` (`dbt_for`), so nothing writes the environment, and runs with
    other warehouses side by side each read their own. Written once, atomically."""
    text = rendered_profile(
        settings.duckdb_path if warehouse_path is None else warehouse_path, settings.partitions_dir if partitions_dir is None else partitions_dir
    )
    folder = settings.data_dir / "dbt_profiles" / hashlib.sha256(text.encode()).hexdigest()[:16]
    if not (folder / "profiles.yml").exists() or (folder / "profiles.yml").read_text() != text:
        write_text(folder / "profiles.yml", text)
    return folder


def frozen_files_name(warehouse_path: Path | str) -> str:
    """The name under which a build of this warehouse reads the partition files frozen
    (`PartitionFiles.frozen`: `<partitions_dir>/.reading/<name>`): the same from build to build, so
    the build's profile is too, and dbt parses only what changed since the last build."""
    return f"dbt-{hashlib.sha256(str(warehouse_path).encode()).hexdigest()[:12]}"


def dbt_for(dbt: DbtCliResource, settings: Settings, warehouse_path: Path | str, partitions_dir: Path | str | None = None) -> DbtCliResource:
    """The run's dbt: the resource the definitions give, with the profiles folder of the run's
    warehouse and partition files (`profiles_dir_for`) as its public `profiles_dir`."""
    fields = {name: getattr(dbt, name) for name in type(dbt).model_fields}
    return type(dbt)(**{**fields, "profiles_dir": str(profiles_dir_for(settings, warehouse_path, partitions_dir))})


def build_dir_for(profiles_dir: Path | str) -> Path:
    """The target folder (relative to the dbt project) of the builds with the profiles folder
    `profiles_dir` (`profiles_dir_for`, `dbt_for`): one per warehouse, kept from build to build.
    dagster-dbt gives each invocation a new folder and copies the project's
    `target/partial_parse.msgpack` into it, which was parsed with the profile `prepare` rendered; dbt parses the whole project again whenever the profile
    differs ("profile has changed": any warehouse but the checkout's own, 2.6 s of each build at
    a million prompts). In the warehouse's own folder a build finds the msgpack the last build of
    the same warehouse wrote, and dbt parses only what changed since. Builds of one warehouse run
    one at a time (pool `warehouse`)."""
    return Path("target") / f"dbt_models-{Path(profiles_dir).name}"


def dbt_build_args(settings: Settings, select: str | None = None, full_refresh: bool = False) -> list[str]:
    """`dbt build` with the pipeline's settings as --vars (tested without running dbt); with
    `full_refresh`, every incremental model is rebuilt from all its input. The dbt unit tests (fixed
    inputs, not the warehouse's data) are left to `make test` (dbt_unit_test_args)."""
    args = ["build", *dbt_vars_args(settings), "--exclude-resource-type", "unit_test", *(["--full-refresh"] if full_refresh else [])]
    if select:
        args += ["--select", select]
    return args


def model_keys(schema: str) -> list[dg.AssetKey]:
    """The asset keys of the dbt models in one schema (`marts`), from the manifest: how other
    packages declare their dependencies on the models without importing the dbt assets."""
    manifest = json.loads(prepared_manifest().read_text())
    return [
        translator.get_asset_key(node)
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and (node.get("config", {}).get("schema") or node.get("schema")) == schema
    ]


# In a warehouse's own build folder (`build_dir_for`): the path of the profiles folder it builds with.
PROFILES_MARKER = "profiles_dir.txt"


def mark_build_dir(build_dir: Path, profiles_dir: Path | str) -> Path:
    """Create the build folder `build_dir` (relative to the dbt project, as `build_dir_for` gives it)
    and record in it the profiles folder it builds with (`prune_build_dirs` keeps it while that exists)."""
    folder = DBT_PROJECT_DIR / build_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROFILES_MARKER).write_text(str(Path(profiles_dir).resolve()))
    return build_dir


def prune_build_dirs(current: Path, keep: int = 3, min_age_s: float = 600.0) -> list[Path]:
    """Delete the build folders beside `current` that no build will use again.

    A warehouse's own folder (`mark_build_dir`) stays while its profiles folder exists (it lives in
    the warehouse's data folder): removing it would make the warehouse's next build parse the whole
    project again (2.6 s at a million prompts), however long ago it last built. Once that folder is
    gone (a deleted workspace or test copy), so is the build folder.

    Any other folder (dagster-dbt gives an invocation without a target path its own
    `target/<op>-<run>-<id>/`, about 4 MB, and never removes it; older code did for every build) goes
    by age: the newest `keep` and any touched in the last `min_age_s` seconds stay, so a build still
    running in another process is never pulled from under it.
    """
    prefix = current.name.split("-", 1)[0] + "-"
    siblings = [p for p in current.parent.glob(f"{prefix}*") if p.is_dir() and p != current]
    removed = []
    unmarked = []
    for path in siblings:
        marker = path / PROFILES_MARKER
        if not marker.is_file():
            unmarked.append(path)
        elif not Path(marker.read_text().strip()).is_dir():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    unmarked.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    now = time.time()
    for path in unmarked[max(keep - 1, 0):]:
        if now - path.stat().st_mtime >= min_age_s:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
