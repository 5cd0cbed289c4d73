"""Dynamic partitions: `benchmarks` (one per benchmarks/<slug>.jsonl) and `audits` (one per audits/<slug>.csv)."""

import dagster as dg

benchmarks_partitions = dg.DynamicPartitionsDefinition(name="benchmarks")
audits_partitions = dg.DynamicPartitionsDefinition(name="audits")


def partition_changes(existing, current) -> tuple[list[str], list[str]]:
    """The keys to add and the keys to delete so that a dynamic partition set `existing` becomes `current`."""
    existing, current = set(existing), set(current)
    return sorted(current - existing), sorted(existing - current)


def partition_requests(partitions: dg.DynamicPartitionsDefinition, existing, current) -> list:
    """A sensor's add and delete requests that make `partitions` exactly `current`."""
    added, removed = partition_changes(existing, current)
    requests = []
    if added:
        requests.append(partitions.build_add_request(added))
    if removed:
        requests.append(partitions.build_delete_request(removed))
    return requests
