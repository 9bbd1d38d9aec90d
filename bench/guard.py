"""Benchmark of the tool-execution guard against the raw operation it stands on.

``python -m bench.guard --backend {sqlite,postgres,dynamodb} [--database URL] --json FILE``

Each path runs in time-boxed rounds (``--round-seconds``, default 2 s of timed work per
path per round, the paths taking turns of ~50 ms within the round so a disk slowing down
slows all of them), over ``--rounds`` (default 6); a ratio is the median of the per-round
ratios, each round compared with the raw figure measured alongside it.

* ``blocked_path_ratio``: refund attempts blocked by idempotency, through the real
  orchestrator (validation, ceiling, claim, event), per second ÷ bare conditional inserts
  per second on the same store in the same run.
* ``executed_path_ratio``: refunds executed end to end (ERP as the tool's role, gateway
  simulator over HTTP, ledger completed, event) per second ÷ the same raw figure.
* ``duplicate_storm``: ≥ 200 concurrent refund attempts on ONE pedido from several
  processes, each its own conversation; the gateway journal must show exactly one debit.
* ``vs_powertools`` (dynamodb): our ledger (ceiling + claim + complete) ÷ Powertools'
  ``@idempotent_function`` with ``DynamoDBPersistenceLayer`` on the same moto server, with
  Powertools' own local cache on (``IdempotencyConfig(use_local_cache=True)``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import threading
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench._common import (
    Interleaved,
    Rate,
    Workload,
    median_ratio,
    moto_server,
    print_table,
    spread,
    total,
    write_json,
)

TARGETS = {"blocked_path_ratio": 0.7, "executed_path_ratio": 0.3, "vs_powertools": 1.0}


@dataclass
class Env:
    """The store under test plus the settings every process builds its guard from."""

    backend: str
    settings_kwargs: dict[str, Any]
    run_id: str
    endpoint: str | None = None
    table: str | None = None


@contextmanager
def environment(backend: str, database: str | None, tmp: Path) -> Iterator[tuple[Env, Any]]:
    """Start what the backend needs and a shared gateway simulator; yield (env, simulator)."""
    from backend.gateway.simulator import GatewaySimulator
    from backend.secrets.base import FileSecretStore
    from backend.settings import load_settings

    run_id = uuid.uuid4().hex[:8]
    kwargs: dict[str, Any] = {"data_dir": str(tmp)}
    with ExitStack() as stack:
        env = Env(backend, kwargs, run_id)
        if backend == "sqlite":
            kwargs["database_url"] = database or f"sqlite:///{tmp / 'bench.sqlite3'}"
        elif backend == "postgres":
            if not database:
                raise SystemExit("--backend postgres needs --database postgresql://…")
            kwargs["database_url"] = database
        else:
            from backend.ledger.dynamodb import create_table, drop_table
            from backend.ledger.factory import dynamodb_client

            env.endpoint = stack.enter_context(moto_server())
            env.table = f"cadencia-bench-{run_id}"
            client = dynamodb_client({"endpoint_url": env.endpoint, "region_name": "us-east-1"})
            create_table(client, env.table)
            stack.callback(drop_table, client, env.table)
            kwargs["database_url"] = database or f"sqlite:///{tmp / 'bench.sqlite3'}"
            kwargs["ledger_url"] = (
                f"dynamodb://{env.table}?endpoint_url={env.endpoint}&region=us-east-1"
            )
        settings = load_settings(**kwargs)
        secret = FileSecretStore(settings.data_dir / "secrets").ensure(settings.gateway_secret_id)
        simulator = GatewaySimulator(secret).start()
        stack.callback(simulator.stop)
        kwargs["gateway_url"] = simulator.url
        yield env, simulator


def _guard(env: Env) -> Any:
    from backend.guard.assembly import build_guard
    from backend.settings import load_settings

    return build_guard(load_settings(**env.settings_kwargs))


CUSTOMER = "c-bench"
"""Whose orders and conversations the benchmark plays: the guard refunds only its own."""


def _pedido(pedido: str) -> dict[str, str]:
    return {"pedidoId": pedido, "valorPedido": "50.00", "clienteId": CUSTOMER}


def _refund(pedido: str) -> dict[str, str]:
    return {"pedidoId": pedido, "valor": "10.00"}


# -- raw conditional insert ---------------------------------------------------------------


class RawInsert:
    """The bare operation the guard is built on, on the same store and connection pool."""

    def __init__(self, env: Env, guard: Any) -> None:
        self.env = env
        self.db = guard.db
        self.ledger = guard.ledger
        self.counter = 0
        if env.backend == "dynamodb":
            return
        self.table = f"bench_raw_{env.run_id}"
        param = ":chave" if self.db.dialect == "sqlite" else "%(chave)s"
        self.sql = (
            f"INSERT INTO {self.table} (chave) VALUES ({param}) ON CONFLICT (chave) DO NOTHING"
        )
        with self.db.transaction() as tx:
            tx.execute_sql(f"CREATE TABLE {self.table} (chave TEXT PRIMARY KEY)")

    def __call__(self, n: int) -> int:
        for _ in range(n):
            self.counter += 1
            key = f"raw#{self.env.run_id}#{self.counter}"
            if self.env.backend == "dynamodb":
                self.ledger.client.put_item(
                    TableName=self.env.table,
                    Item={"pk": {"S": key}},
                    ConditionExpression="attribute_not_exists(pk)",
                )
            else:
                with self.db.transaction() as tx:
                    tx.execute_sql(self.sql, {"chave": key})
        return n

    def drop(self) -> None:
        if self.env.backend != "dynamodb":
            with self.db.transaction() as tx:
                tx.execute_sql(f"DROP TABLE {self.table}")


# -- guarded paths -------------------------------------------------------------------------


def measure_paths(env: Env, guard: Any, timing: Interleaved) -> dict[str, list[Rate]]:
    """Interleave raw inserts, idempotency-blocked and executed refunds; return their rounds."""
    from backend.erp.seed import upsert_pedidos
    from backend.ledger.base import counter_key
    from backend.tools.registry import tool_spec

    run = env.run_id
    blocked_pedido = f"blk-{run}"
    upsert_pedidos(guard.db, [_pedido(blocked_pedido)])
    call = guard.orchestrator.call
    guard.conversations.bind(f"conv-{run}-setup", CUSTOMER)
    first = call(f"conv-{run}-setup", "emitir-reembolso", _refund(blocked_pedido))
    assert first.resultado == "executado", first.record
    seen: Counter[str] = Counter()
    raw = RawInsert(env, guard)
    serial = iter(range(1, 1 << 62))  # one fresh conversation per attempt, across rounds
    fresh: list[str] = []  # pedidos seeded (untimed) for the executed path, not yet refunded
    talks: dict[str, list[str]] = {"b": [], "e": []}  # conversations bound (untimed), unused

    def bind(path: str, n: int) -> None:
        for _ in range(n):
            conversa = f"conv-{run}-{path}{next(serial)}"
            guard.conversations.bind(conversa, CUSTOMER)
            talks[path].append(conversa)

    def blocked(n: int) -> int:
        for _ in range(n):
            got = call(talks["b"].pop(), "emitir-reembolso", _refund(blocked_pedido))
            seen[f"blocked:{got.resultado}"] += 1
        return n

    def seed(n: int) -> None:
        pedidos = [f"exe-{run}-{next(serial)}" for _ in range(n)]
        upsert_pedidos(guard.db, [_pedido(p) for p in pedidos])
        fresh.extend(pedidos)
        bind("e", n)

    def executed(n: int) -> int:
        for _ in range(n):
            pedido = fresh.pop()
            got = call(talks["e"].pop(), "emitir-reembolso", _refund(pedido))
            seen[f"executed:{got.resultado}"] += 1
        return n

    refund_spec = tool_spec("emitir-reembolso")

    def ledger_blocked(n: int) -> int:
        # The storage decision alone (no validation, event or message): where time goes.
        for _ in range(n):
            conversa = f"conv-{run}-l{next(serial)}"
            claim = refund_spec.claim_for(conversa, refund_spec.parse(_refund(blocked_pedido)))
            got = guard.ledger.reserve(
                counter_key(conversa, blocked_pedido, "emitir-reembolso"), claim
            )
            seen[f"ledger:{got.claim}"] += 1
        return n

    try:
        rounds = timing.run(
            {
                "raw": Workload(raw),
                "blocked": Workload(blocked, prepare=partial(bind, "b")),
                "executed": Workload(executed, prepare=seed),
                "ledger_blocked": Workload(ledger_blocked),
            }
        )
    finally:
        raw.drop()
    expected = {
        "blocked:bloqueado_por_idempotencia": total(rounds["blocked"]).ops,
        "executed:executado": total(rounds["executed"]).ops,
        "ledger:duplicate": total(rounds["ledger_blocked"]).ops,
    }
    if seen != Counter(expected):
        raise SystemExit(f"unexpected outcomes while measuring: {dict(seen)}")
    return rounds


# -- duplicate storm -----------------------------------------------------------------------


def _storm_worker(
    env: Env, pedido: str, worker: int, threads: int, calls: int, barrier: Any, results: Any
) -> None:
    guard = _guard(env)
    try:
        counts: Counter[str] = Counter()
        lock = threading.Lock()

        def one(t: int) -> None:
            for i in range(calls):
                got = guard.orchestrator.call(
                    f"storm-{worker}-{t}-{i}", "emitir-reembolso", _refund(pedido)
                )
                with lock:
                    counts[got.resultado] += 1

        barrier.wait(timeout=120)  # every process is built and connected before the race
        pool = [threading.Thread(target=one, args=(t,)) for t in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        results.put(dict(counts))
    finally:
        guard.close()


def duplicate_storm(
    env: Env, guard: Any, simulator: Any, workers: int, threads: int, calls: int
) -> dict[str, Any]:
    """All workers × threads × calls attempts refund ONE pedido at once."""
    from backend.erp.seed import upsert_pedidos

    pedido = f"storm-{env.run_id}"
    upsert_pedidos(guard.db, [_pedido(pedido)])
    for w in range(workers):  # every storm conversation is the customer's
        for t in range(threads):
            for i in range(calls):
                guard.conversations.bind(f"storm-{w}-{t}-{i}", CUSTOMER)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    requests_before = simulator.requests
    procs = [
        ctx.Process(target=_storm_worker, args=(env, pedido, w, threads, calls, barrier, results))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    outcomes: Counter[str] = Counter()
    for _ in procs:
        outcomes.update(results.get(timeout=600))
    for proc in procs:
        proc.join(timeout=60)
        if proc.exitcode != 0:
            raise SystemExit(f"storm worker exited with {proc.exitcode}")
    debits = [d for d in simulator.debits() if d.pedido_id == pedido]
    return {
        "attempts": sum(outcomes.values()),
        "workers": workers,
        "threads_per_worker": threads,
        "gateway_debits": len(debits),
        "gateway_requests": simulator.requests - requests_before,
        "resultados": dict(outcomes),
    }


# -- vs Powertools (dynamodb) --------------------------------------------------------------


def vs_powertools(
    env: Env, guard: Any, timing: Interleaved, repeats: int = 3
) -> dict[str, list[Rate]]:
    """Our ledger vs Powertools idempotency on the same moto server: each key is called
    ``repeats`` times (the first executes, the rest return the stored result), ours from a
    new conversation each time so its ceiling counts every call.

    Powertools runs with its own in-process cache on (``use_local_cache=True``), as ours
    keeps executed records in one: neither pays a round trip it can answer locally.
    """
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer,
        IdempotencyConfig,
        idempotent_function,
    )

    from backend.ledger.base import ClaimRequest, counter_key, payload_hash

    client, ledger = guard.ledger.client, guard.ledger
    table = f"powertools-{env.run_id}"
    client.create_table(
        TableName=table,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    persistence = DynamoDBPersistenceLayer(table_name=table, boto3_client=client)
    # Outside Lambda there is no remaining-time context; Powertools warns on every call.
    warnings.filterwarnings("ignore", message="Couldn't determine the remaining time")

    @idempotent_function(
        data_keyword_argument="pedido",
        persistence_store=persistence,
        config=IdempotencyConfig(use_local_cache=True),
    )
    def powertools_refund(pedido: dict[str, str]) -> dict[str, str]:
        return {"debito": pedido["pedidoId"]}

    def ours_refund(pedido: dict[str, str], conversa: str) -> dict[str, Any] | None:
        chave = f"pt#{pedido['pedidoId']}"
        claim = ClaimRequest(
            chave,
            "emitir-reembolso",
            conversa,
            pedido["pedidoId"],
            payload_hash(pedido),
            pedido["valor"],
        )
        got = ledger.reserve(counter_key(conversa, pedido["pedidoId"], "emitir-reembolso"), claim)
        if got.claim == "claimed":
            result = {"debito": pedido["pedidoId"]}
            ledger.complete(chave, result)
            return result
        return got.record.resultado if got.record else None

    serial = iter(range(1 << 62))

    def workload(tag: str) -> Workload:
        def run(n: int) -> int:
            keys = max(1, n // repeats)
            for _ in range(keys):
                k = next(serial)
                pedido = {"pedidoId": f"{tag}-{env.run_id}-{k}", "valor": "10.00"}
                for r in range(repeats):
                    out = (
                        powertools_refund(pedido=pedido)
                        if tag == "pt"
                        else ours_refund(pedido, f"c{k}-{r}")
                    )
                    assert out == {"debito": pedido["pedidoId"]}, out
            return keys * repeats

        return Workload(run)

    try:
        return timing.run({"powertools": workload("pt"), "ours": workload("us")})
    finally:
        client.delete_table(TableName=table)


# -- command line --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.guard", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--backend", choices=["sqlite", "postgres", "dynamodb"], required=True)
    parser.add_argument("--database", help="state database URL (required for postgres)")
    parser.add_argument("--json", type=Path, required=True, help="where to write the result")
    parser.add_argument(
        "--round-seconds", type=float, default=2.0, help="timed seconds per workload per round"
    )
    parser.add_argument("--rounds", type=int, default=6, help="interleaved rounds (median)")
    parser.add_argument("--storm-workers", type=int, default=2)
    parser.add_argument("--storm-threads", type=int, default=8)
    parser.add_argument("--storm-calls", type=int, default=13, help="attempts per storm thread")
    args = parser.parse_args(argv)
    if args.storm_workers < 2 or args.storm_workers * args.storm_threads * args.storm_calls < 200:
        parser.error("the storm needs >= 2 workers and >= 200 attempts in total")

    with (
        tempfile.TemporaryDirectory(prefix="cadencia-bench-") as tmp,
        environment(args.backend, args.database, Path(tmp)) as (env, simulator),
    ):
        guard = _guard(env)
        try:
            rounds = measure_paths(env, guard, Interleaved(args.rounds, args.round_seconds))
            storm = duplicate_storm(
                env, guard, simulator, args.storm_workers, args.storm_threads, args.storm_calls
            )
            pt = (
                vs_powertools(env, guard, Interleaved(args.rounds, args.round_seconds))
                if args.backend == "dynamodb"
                else None
            )
        finally:
            guard.close()

    raw = rounds["raw"]
    result: dict[str, Any] = {
        "backend": args.backend,
        "rounds": args.rounds,
        "round_seconds": args.round_seconds,
        "blocked_path_ratio": median_ratio(rounds["blocked"], raw),
        "executed_path_ratio": median_ratio(rounds["executed"], raw),
        "ledger_blocked_ratio": median_ratio(rounds["ledger_blocked"], raw),
        "blocked_path_ratio_range": spread(rounds["blocked"], raw),
        "executed_path_ratio_range": spread(rounds["executed"], raw),
        "guarded_calls_per_s": round(total(rounds["blocked"]).per_s, 1),
        "executed_calls_per_s": round(total(rounds["executed"]).per_s, 1),
        "raw_conditional_insert_per_s": round(total(raw).per_s, 1),
        "duplicate_storm": storm,
        "vs_powertools": median_ratio(pt["ours"], pt["powertools"]) if pt else None,
    }
    if pt:
        result["vs_powertools_range"] = spread(pt["ours"], pt["powertools"])
        result["powertools_calls_per_s"] = round(total(pt["powertools"]).per_s, 1)
        result["ours_idempotent_calls_per_s"] = round(total(pt["ours"]).per_s, 1)
    write_json(args.json, result)

    def target(key: str) -> str:
        return f">= {TARGETS[key]}"

    def with_range(key: str) -> str:
        low, high = result[f"{key}_range"]
        return f"{result[key]} ({low}–{high})"

    print_table(
        f"bench.guard — {args.backend} ({args.rounds} rounds × {args.round_seconds} s, "
        "median of per-round ratios, range in brackets)",
        [
            ("raw conditional inserts/s", f"{result['raw_conditional_insert_per_s']}", ""),
            ("blocked attempts/s (orchestrator)", f"{result['guarded_calls_per_s']}", ""),
            ("executed refunds/s (orchestrator)", f"{result['executed_calls_per_s']}", ""),
            ("blocked_path_ratio", with_range("blocked_path_ratio"), target("blocked_path_ratio")),
            ("  ledger.reserve alone ÷ raw", f"{result['ledger_blocked_ratio']}", ""),
            (
                "executed_path_ratio",
                with_range("executed_path_ratio"),
                target("executed_path_ratio"),
            ),
            (
                "storm attempts / workers",
                f"{storm['attempts']} / {storm['workers']}",
                ">= 200 / >= 2",
            ),
            ("storm gateway debits", f"{storm['gateway_debits']}", "== 1"),
            ("storm gateway requests", f"{storm['gateway_requests']}", "== 1"),
            (
                "vs_powertools (local cache on)",
                with_range("vs_powertools") if pt else "None",
                target("vs_powertools") if pt else "n/a",
            ),
        ],
    )
    return 0 if storm["gateway_debits"] == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
