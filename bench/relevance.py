"""Retrieval quality on the relevance set: search, the task-compiled layer and plain BM25, side by side.

    python bench/relevance.py                   # SQLite (temporary file)
    python bench/relevance.py --database-url postgres://postgres@127.0.0.1:5432/postgres
    python bench/relevance.py --tasks           # and each task's rank under each system

Loads the relevance set (`tests/relevance/corpus.py`: three made-up teams' ledgers in Squad's shapes,
and the tasks their agents start, each labelled with the rows it should bring) through the services,
one project per team, then runs every task as its agent through:

- search: `ledger.finder.find(project, agent_name=<agent>, coordinator=False, q=<task>)`;
- layer: the relevant layer of `ledger.context.compile(project, <agent>, task=<task>)`, its rows in
  block order, with the memory layer left empty so that every row the agent may read competes;
- bm25: plain BM25 (rank_bm25) over exactly the rows the agent may see, any word, no stemming.

Prints hit@1, hit@5 and MRR (first target within the top ten) for each, then hit@5 and MRR per kind of
target. How each system is run and measured: `tests/relevance/measure.py`.
"""

from __future__ import annotations

import time

from _setup import parse_args, setup_django


def main() -> None:
    args = parse_args(
        "Retrieval quality on the relevance set",
        [("--tasks", {"action": "store_true", "help": "print each task's rank under each system"})],
    )
    engine = setup_django(args.database_url, "relevance")
    from tests.relevance import measure

    started = time.perf_counter()
    loaded = measure.load_teams()
    print(f"Relevance set on {engine}: {measure.describe_set()}")
    print(f"loaded through the services in {time.perf_counter() - started:.1f} s\n")

    systems = list(measure.SYSTEMS)
    if not measure.search_is_available():
        print("search: ledger.finder is missing, so search is not measured\n")
        systems.remove("search")
    results = {system: measure.run(system, loaded) for system in systems}
    print(measure.table(results))
    leaked = [
        f"{system}: {key} for {outcome.task.text!r}"
        for system, outcomes in results.items()
        for outcome in outcomes
        for key in outcome.unseeable()
    ]
    if leaked:
        print("\nrows returned that the agent must never be given:\n  " + "\n  ".join(leaked))
    if args.tasks:
        print("\n" + measure.per_task(results))


if __name__ == "__main__":
    main()
