"""The narrowing judges' (v4 and later) knowledge of occupations: titles, technology and the O*NET
prior. Where the occupation prior's file is (and its cache, addressed by its key), the O*NET texts it
is fitted from, the key of the prior on disk, and `load_knowledge`, which builds the knowledge once
per run for given inputs."""

from pathlib import Path

import pandas as pd

from ..resources import WarehouseResource
from ..settings import Settings
from .evidence import OccupationEvidence
from .matching import LabelingRuntime
from .onet_tables import OnetTables, title_frame
from .prior import OccupationPrior, training_texts
from .prompt_retrieval import OccupationKnowledge
from .retrieval import TaskIndex
from .technology import TechnologyIndex
from .titles import TitleIndex

PRIOR_FILE = "occupation_prior.npz"


def prior_path(settings) -> Path:
    return settings.data_dir / "models" / PRIOR_FILE


def prior_cache_path(settings, inputs_sha256: str) -> Path:
    """Where the cache folder keeps the prior fitted on these inputs by this code: its key
    (prior_key) covers both, so the cache is addressed by content, like the embedding store."""
    return settings.cache_dir / "priors" / f"{inputs_sha256}.npz"


def prior_training_texts(warehouse_db: WarehouseResource) -> pd.DataFrame:
    """The O*NET texts the prior learns from (prior.training_texts), read from raw.*."""
    tasks = warehouse_db.query("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements ORDER BY task_id")
    occupations = warehouse_db.query("SELECT onet_soc_code, title FROM raw.onet_occupations ORDER BY onet_soc_code")
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
    return training_texts(
        tasks,
        occupations,
        warehouse_db.query_if_exists("raw", "onet_task_dwas", "SELECT onet_soc_code, dwa_title FROM {table}"),
        title_frame(warehouse_db),
        warehouse_db.query_if_exists("raw", "onet_technology_skills", "SELECT onet_soc_code, example FROM {table}"),
    )


def load_knowledge(onet: OnetTables, index: TaskIndex, runtime: LabelingRuntime, settings: Settings) -> OccupationKnowledge:
    """Titles, technology and the prior of the default judge, built once per run (in `runtime`) for given inputs."""
    titles, technology = onet.titles, onet.technology
    path = prior_path(settings)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the occupation prior is missing; materialize labeling/occupation_prior first")
    # Built again in this process when the titles, the technology or the prior's key change (the key
    # the prior's file carries, not its modification time).
    key = (
        tuple(index.occupation_codes),
        int(pd.util.hash_pandas_object(titles, index=False).sum()),
        int(pd.util.hash_pandas_object(technology, index=False).sum()) if technology is not None else 0,
        prior_inputs_sha256(settings),
    )

    def build() -> OccupationKnowledge:
        codes = list(index.occupation_codes)
        evidence = OccupationEvidence(
            codes, TitleIndex(titles, set(codes)), TechnologyIndex(technology, codes) if technology is not None else None
        )
        prior = OccupationPrior.load(path)
        if prior.codes != codes:
            raise ValueError(f"{path}: the prior was fitted on other occupations; materialize labeling/occupation_prior again")
        return OccupationKnowledge(evidence, prior)

    return runtime.memoized("knowledge", key, build)


def prior_inputs_sha256(settings) -> str:
    """The training-text hash the prior on disk was fitted on ('none' when there is none yet)."""
    path = prior_path(settings)
    return OccupationPrior.key_of(path) if path.is_file() else "none"

