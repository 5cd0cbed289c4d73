"""One writer process of the store concurrency test: N writes, one at a time, to a labeling store.

    python store_writer.py judgements|embeddings PATH WORKER N START_AT

Waits until the wall-clock time START_AT (so every writer starts together, the store possibly not
yet created), then makes N writes of its own keys, each committed on its own, as the judges write
(a judgement as it arrives; an embedding batch). Prints one JSON line: writes made and the errors
met, each as its message (a "database is locked" would be one).
"""

import json
import sys
import time

import numpy as np

from workbank_dagster.labeling.embedding_store import EmbeddingStore
from workbank_dagster.labeling.judgement_cache import Judgement, JudgementCache

MODEL = "store-writer-test"


def main(kind: str, path: str, worker: int, n: int, start_at: float) -> dict:
    time.sleep(max(0.0, start_at - time.time()))
    errors: list[str] = []
    written = 0
    try:
        store = JudgementCache(path) if kind == "judgements" else EmbeddingStore(path)
    except Exception as exc:  # opening is part of what is tested: several processes create it at once
        return {"worker": worker, "written": 0, "errors": [f"open: {type(exc).__name__}: {exc}"]}
    for i in range(n):
        key = f"w{worker}-{i:05d}"
        try:
            if kind == "judgements":
                store.put("labeler", key, "candidates", Judgement([i], [], 10, 2, 0.0001, "sync"))
            else:
                store.put(MODEL, [key], np.full((1, 384), worker + i / n, dtype=np.float32))
            written += 1
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    return {"worker": worker, "written": written, "errors": errors}


if __name__ == "__main__":
    kind, path, worker, n, start_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    print(json.dumps(main(kind, path, worker, n, start_at)), flush=True)
