"""A real Dagster run that takes the `warehouse` pool slot and keeps it until it is killed.

    python slot_holder.py      (DAGSTER_HOME set; prints "holding <run id>" once the slot is held)

It stands for a run whose process dies outright while it holds the slot (an out-of-memory kill,
`make ui` killed hard): the test kills it with SIGKILL, so it never ends its run nor frees the slot.
"""

import os
import sys
import time
import warnings

import dagster as dg

warnings.filterwarnings("ignore")


@dg.asset(pool="warehouse", key=["test", "slot_holder"])
def slot_holder(context: dg.AssetExecutionContext) -> None:
    print(f"holding {context.run_id}", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    instance = dg.DagsterInstance.get()
    assert instance.event_log_storage.get_pool_config().default_pool_limit == 1, os.environ["DAGSTER_HOME"]
    dg.materialize([slot_holder], instance=instance)
    sys.exit(1)  # never reached: the test kills this process
