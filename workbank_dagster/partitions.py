"""Dynamic partitions: `benchmarks` (one per benchmarks/<slug>.jsonl) and `audits` (one per audits/<slug>.csv)."""

import dagster as dg

benchmarks_partitions = dg.DynamicPartitionsDefinition(name="benchmarks")
audits_partitions = dg.DynamicPartitionsDefinition(name="audits")
