"""What Dagster's staleness sees and does not, on a graph shaped like ours (a dynamic-partitioned
asset per benchmark under an unpartitioned one, as the labels under the models): the facts that
keep `make run` from following it alone (docs/pipeline.md, "Dagster's staleness"). Should a Dagster
upgrade change one, this test says so, and the run path can be revisited."""

from __future__ import annotations

import dagster as dg

from workbank_dagster.staleness import not_fresh

BENCHMARKS = dg.DynamicPartitionsDefinition(name="benchmarks")


def labels_writing(content: str) -> dg.AssetsDefinition:
    """The per-benchmark labels, whose step reports `content` (and the partition) as its data version."""

    @dg.asset(partitions_def=BENCHMARKS, code_version="1", name="labels")
    def labels(context) -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion(f"{content} of {context.partition_key}"))

    return labels


labels = labels_writing("labels")


@dg.asset(deps=[labels], code_version="1")
def coverage() -> dg.MaterializeResult:
    return dg.MaterializeResult(data_version=dg.DataVersion("coverage"))


@dg.asset(deps=[coverage], code_version="1")
def regression() -> dg.MaterializeResult:
    return dg.MaterializeResult(data_version=dg.DataVersion("regression"))


DEFS = dg.Definitions(assets=[labels, coverage, regression])


def _built(keys: list[str]) -> dg.DagsterInstance:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", keys)
    for key in keys:
        dg.materialize([labels], instance=instance, partition_key=key)
    dg.materialize([labels, coverage, regression], instance=instance, selection=[coverage, regression])
    return instance


def _stale(instance: dg.DagsterInstance) -> dict[str, str]:
    """The unpartitioned assets Dagster calls stale or missing, with the status and first cause."""
    found = {asset: not_fresh(instance, DEFS, dg.AssetKey(asset)).get(None) for asset in ("coverage", "regression")}
    return {asset: status for asset, status in found.items() if status is not None}


def test_staleness_reaches_the_direct_dependants_only():
    """A benchmark's labels rebuilt with a new data version: the model over them is stale, what
    reads the model is not (not transitive); the model built again with the same data version
    leaves what reads it fresh (a version that comes out the same stops the wave)."""
    instance = _built(["a", "b"])
    assert _stale(instance) == {}
    dg.materialize([labels], instance=instance, partition_key="a")  # the same version: nothing moved
    assert _stale(instance) == {}
    dg.materialize([labels_writing("relabeled")], instance=instance, partition_key="a")
    assert _stale(instance) == {"coverage": "STALE: has a new dependency data version"}
    # The model built again reports the same data version: the wave stops there.
    dg.materialize([labels, coverage, regression], instance=instance, selection=[coverage])
    assert _stale(instance) == {}


def test_a_partition_removed_or_added_unbuilt_is_no_change_to_dagster():
    """A removed benchmark (its partition deleted) leaves the model over every benchmark fresh, and
    so does a new one not yet built: the runner has to count a change of the partition set itself."""
    instance = _built(["a", "b", "c"])
    instance.delete_dynamic_partition("benchmarks", "c")
    assert _stale(instance) == {}
    instance.add_dynamic_partitions("benchmarks", ["d"])
    assert _stale(instance) == {}
    dg.materialize([labels], instance=instance, partition_key="d")
    assert _stale(instance) == {"coverage": "STALE: has a new dependency data version"}
