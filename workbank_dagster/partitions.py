"""The `benchmarks` dynamic partitions definition (one partition per benchmarks/<slug>.jsonl)."""

import dagster as dg

benchmarks_partitions = dg.DynamicPartitionsDefinition(name="benchmarks")
