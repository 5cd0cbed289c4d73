"""The staleness query of tests/support/dagster_staleness.py, without a code location: its document
is valid against the installed dagster-graphql schema, and a response reads into the statuses the
scenario test compares (tests/scenarios/test_staleness.py asks the real one)."""

from __future__ import annotations

import graphql
from dagster_graphql.schema import create_schema
from dagster_staleness import compare, read_staleness, staleness_query


def test_the_query_is_valid_against_the_installed_schema():
    document = graphql.parse(staleness_query(["raw/benchmark_prompts", "labeling/embedded_labels"]))
    assert graphql.validate(create_schema().graphql_schema, document) == []
    # The check can fail: a field the schema does not have is an error.
    wrong = graphql.parse(staleness_query(["raw/benchmark_prompts"]).replace("staleStatusByPartition", "staleStatusOfPartition"))
    assert graphql.validate(create_schema().graphql_schema, wrong)


def _node(path, status="FRESH", causes=(), partitioned=False, observable=False):
    return {"assetKey": {"path": path}, "isPartitioned": partitioned, "isObservable": observable, "isMaterializable": not observable,
            "staleStatus": status, "staleCauses": list(causes)}


def test_a_response_reads_into_statuses_per_asset_and_partition():
    cause = {"key": {"path": ["files", "oews_national"]}, "partitionKey": None, "category": "DATA", "reason": "has a new data version",
             "dependency": None, "dependencyPartitionKey": None}
    code = {"key": {"path": ["labeling", "embedded_labels"]}, "partitionKey": "b", "category": "CODE", "reason": "has a new code version",
            "dependency": None, "dependencyPartitionKey": None}
    response = {"data": {
        "assetNodes": [
            _node(["files", "oews_national"], observable=True),
            _node(["raw", "oews_national"], "STALE", [cause]),
            _node(["marts", "fct_task_hours"]),
            _node(["labeling", "embedded_labels"], partitioned=True),  # FRESH whatever its partitions: read per partition
            _node(["labeling", "llm_labels"], partitioned=True),
        ],
        "p0": {"__typename": "AssetNode", "assetKey": {"path": ["labeling", "embedded_labels"]}, "partitionKeys": ["a", "b"],
               "staleStatusByPartition": ["FRESH", "STALE"], "staleCausesByPartition": [[], [code]]},
        "p1": {"__typename": "AssetNode", "assetKey": {"path": ["labeling", "llm_labels"]}, "partitionKeys": ["a", "b"],
               "staleStatusByPartition": ["MISSING", "MISSING"], "staleCausesByPartition": [[], []]},
    }}
    found = read_staleness(response)
    assert found.stale == {"raw/oews_national", "labeling/embedded_labels[b]"}
    assert found.missing == {"labeling/llm_labels[a]", "labeling/llm_labels[b]"}
    assert found.causes["raw/oews_national"] == [{"asset": "files/oews_national", "category": "DATA", "reason": "has a new data version"}]
    assert "labeling/embedded_labels" not in found.status
    children = {"raw/oews_national": ["marts/fct_task_hours", "labeling/embedded_labels"], "labeling/embedded_labels": ["marts/fct_task_hours"]}
    assert found.stale_and_downstream(children) == {
        "raw/oews_national", "marts/fct_task_hours", "labeling/embedded_labels[a]", "labeling/embedded_labels[b]",
    }
    # Against a run in which the raw table kept its rows and the partition worked.
    result = compare(found, worked={"labeling/embedded_labels[b]", "marts/fct_task_hours"}, kept={"raw/oews_national"}, children=children)
    assert not result["agree"]
    assert result["stale_but_kept"] == ["raw/oews_national"] and result["worked_but_not_stale"] == ["marts/fct_task_hours"]
    assert result["worked_but_not_stale_or_downstream"] == [] and result["causes"]["raw/oews_national"][0]["asset"] == "files/oews_national"


def test_a_graphql_error_is_an_error():
    import pytest

    with pytest.raises(RuntimeError, match="Cannot query field"):
        read_staleness({"data": None, "errors": [{"message": "Cannot query field 'x' on type 'AssetNode'."}]})
