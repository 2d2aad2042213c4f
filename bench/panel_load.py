"""Writers and viewers on the real panel: do the phones watching a match slow down those
who write to it?

The panel runs as ``tabletop panel`` in its own process on 127.0.0.1.  ``--writers``
threads post events to one match (each with an ``Idempotency-Key``, retried with the
same key after a connection error, as the pages do) for ``--seconds``, first with no
one watching and then with ``--viewers`` WebSocket clients reading every push.  The log
is then read back: an acknowledged event missing from it is lost, one stored twice is
doubled.

    python -m bench.panel_load [--viewers 100] [--writers 4] [--seconds 10]
                               [--database sqlite|postgresql|URL] [--stalled 60]
    python -m bench.panel_load --hints 16 [--budget 2] [--rounds 3]

Prints, per run, writes per second and the write's median and p99 latency, the pushes
the viewers received and their mean size (after each page's first, whole state: the
patches), and lost and doubled writes; ``--json`` prints them as JSON.
``--stalled N`` measures instead the panel's resident memory before, while and after N
viewers that stop reading after their first push sit on a match being written to, three
times over on a new match each (memory the first round takes should be reused, not grow).
``--hints N`` asks instead for N hints at once on a Räuber table whose exact rebuild takes a
tenth of a second or more (``--budget`` seconds each, ``--rounds`` times), and prints how
long each round's slowest answer and slowest refusal took against the promise, 1.1 x the
budget + 50 ms, counted at the client from before it connects.
``--database postgresql`` starts a throwaway cluster (tests/panel/postgres.py; needs
Debian's ``postgresql`` package).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ["Ana", "Ben", "Cem", "Dora"]
MELDS = ["R3 R4 R5", "K7 B7 O7", "B10 B11 JK B13", "O4 O5 O6"]


@dataclass
class Run:
    viewers: int
    writes: int
    seconds: float
    writes_per_second: float
    p50_ms: float
    p99_ms: float
    retried: int
    failed: int
    pushes: int
    bytes_per_push: int
    viewers_dropped: int


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _request(url: str, body: dict[str, Any] | None = None, key: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers,
                                     method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


@contextlib.contextmanager
def panel(database_url: str) -> Iterator[tuple[str, int]]:
    """``tabletop panel`` on a free port: its base URL and process id."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tabletop", "panel", "--database", database_url,
         "--port", str(port)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                _request(base + "/api/matches")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the panel did not start: {process.stderr}") from None
                time.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def _write(base: str, match_id: int, number: int, latencies: list[float],
           counts: dict[str, int]) -> str:
    """Post one event until it is acknowledged; its key."""
    key = uuid.uuid4().hex
    event = {"type": "table", "seat": number % len(PLAYERS), "t": float(number),
             "melds": MELDS, "bench": key}
    started = time.perf_counter()
    for _attempt in range(20):
        try:
            _request(f"{base}/api/matches/{match_id}/events", event, key)
            latencies.append(time.perf_counter() - started)
            return key
        except (OSError, urllib.error.HTTPError):
            counts["retried"] += 1
            time.sleep(0.05)
    counts["failed"] += 1
    return ""


async def _viewer(url: str, stop: asyncio.Event, received: Any, volume: Any, slot: int,
                  dropped: Any) -> None:
    import websockets

    async with websockets.connect(url, origin=None, max_size=None) as socket_:
        while not stop.is_set():
            try:
                message = await asyncio.wait_for(socket_.recv(), 0.5)
            except TimeoutError:
                continue
            except websockets.ConnectionClosed:
                dropped[slot] = 1
                return
            received[slot] += 1
            if received[slot] > 1:  # the first is the whole state every page is sent
                volume[slot] += len(message.encode() if isinstance(message, str) else message)


def _viewers(url: str, count: int, ready: Any, stop: Any, received: Any, volume: Any,
             dropped: Any) -> None:
    """``count`` viewers in a process of their own, so that reading the pushes does not
    take the writers' time in this one."""
    async def main() -> None:
        halt = asyncio.Event()
        tasks = [asyncio.ensure_future(_viewer(url, halt, received, volume, slot, dropped))
                 for slot in range(count)]
        while min(received[:], default=1) == 0 and not all(task.done() for task in tasks):
            await asyncio.sleep(0.05)  # every viewer has its first push: all are watching
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        halt.set()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


def measure(base: str, match_id: int, viewers: int, writers: int, seconds: float,
            keys: list[str]) -> Run:
    received = multiprocessing.Array("i", viewers, lock=False)
    volume = multiprocessing.Array("q", viewers, lock=False)
    dropped = multiprocessing.Array("i", viewers, lock=False)
    ready, stop = multiprocessing.Event(), multiprocessing.Event()
    watching = None
    if viewers:
        ws = base.replace("http://", "ws://") + f"/ws/matches/{match_id}"
        watching = multiprocessing.Process(target=_viewers,
                                           args=(ws, viewers, ready, stop, received, volume,
                                                 dropped))
        watching.start()
        if not ready.wait(60):
            watching.terminate()
            raise RuntimeError("the viewers did not all connect")
    first_pushes = sum(received)
    latencies: list[float] = []
    counts = {"retried": 0, "failed": 0}
    numbers = iter(range(10**9))
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def writer() -> None:
        while time.monotonic() < deadline:
            with lock:
                number = next(numbers)
            key = _write(base, match_id, number, latencies, counts)
            if key:
                with lock:
                    keys.append(key)

    started = time.monotonic()
    threads = [threading.Thread(target=writer) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    time.sleep(1.5)  # the last pushes
    stop.set()
    if watching is not None:
        watching.join(30)
        if watching.is_alive():
            watching.terminate()
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0
    return Run(
        viewers=viewers,
        writes=len(latencies),
        seconds=round(elapsed, 2),
        writes_per_second=round(len(latencies) / elapsed, 1),
        p50_ms=round(statistics.median(ordered) * 1000, 1) if ordered else 0.0,
        p99_ms=round(p99 * 1000, 1),
        retried=counts["retried"],
        failed=counts["failed"],
        pushes=sum(received) - first_pushes,
        bytes_per_push=sum(volume) // max(1, sum(received) - first_pushes),
        viewers_dropped=sum(dropped),
    )


def _resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS for process {pid}")


def stalled(database_url: str, count: int, writers: int, seconds: float) -> dict[str, Any]:
    """The panel's resident memory before, while and after ``count`` viewers that stop
    reading after their first push sit on a match that is written to for ``seconds``."""
    from websockets.sync.client import connect

    def new_match() -> int:
        match_id = int(_request(base + "/api/matches", {"name": "stalled"})["id"])
        _request(f"{base}/api/matches/{match_id}/setup",
                 {"who": "bench", "variant": "sabra", "players": PLAYERS})
        return match_id

    with panel(database_url) as (base, pid):
        keys: list[str] = []
        measure(base, new_match(), 0, writers, 2.0, keys)  # warm the panel's caches
        before = _resident_mb(pid)
        port = int(base.rsplit(":", 1)[1])
        rounds = []
        # each round on a match of its own: a push replays the whole match, and a longer
        # match's replay needs more memory at its peak whoever watches
        for _round in range(3):  # memory the first round takes should be reused after
            match_id = new_match()
            sockets, clients = [], []
            for _ in range(count):
                raw = socket.socket()
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting
                raw.connect(("127.0.0.1", port))
                # the client's reader stops once it holds one message: it never reads again
                clients.append(connect(f"ws://127.0.0.1:{port}/ws/matches/{match_id}",
                                       sock=raw, max_queue=1, origin=None))
                sockets.append(raw)
            run = measure(base, match_id, 0, writers, seconds, keys)
            during = _resident_mb(pid)
            for raw in sockets:
                raw.close()
            measure(base, match_id, 0, writers, 2.0, keys)
            time.sleep(1.0)
            rounds.append({"writes_per_second": run.writes_per_second, "p99_ms": run.p99_ms,
                           "mb_while": during, "mb_after": _resident_mb(pid)})
    return {"database": database_url.split(":", 1)[0], "stalled": count,
            "mb_before": before, "rounds": rounds}


def bench(database_url: str, viewers: int, writers: int, seconds: float) -> dict[str, Any]:
    with panel(database_url) as (base, _pid):
        keys: list[str] = []
        runs = []
        stored: list[str] = []
        # a match of its own for each run: both start from the same log
        for count in (0, viewers):
            match_id = int(_request(base + "/api/matches", {"name": "load"})["id"])
            _request(f"{base}/api/matches/{match_id}/setup",
                     {"who": "bench", "variant": "sabra", "players": PLAYERS})
            runs.append(measure(base, match_id, count, writers, seconds, keys))
            stored += [event["bench"] for event in
                       _request(f"{base}/api/matches/{match_id}/events") if event.get("bench")]
    acknowledged = set(keys)
    lost = len(acknowledged - set(stored))
    doubled = len(stored) - len(set(stored))
    ratio = runs[1].writes_per_second / runs[0].writes_per_second if runs[0].writes else 0.0
    return {"database": database_url.split(":", 1)[0], "writers": writers,
            "runs": [asdict(run) for run in runs], "lost": lost, "doubled": doubled,
            "rate_with_viewers": round(ratio, 3)}


HINT_TABLE = ["AS 2S 3S", "4S 5S 6S", "7S 8S 9S", "AH 2H 3H", "4H 5H 6H", "8H 9H 10H",
              "AD 2D 3D", "4D 5D 6D", "7D 8D 9D", "AC 2C 3C", "JK 5C 6C", "9C JK JC",
              "QS QH JK", "7C 7H JK"]
HINT_RACK = "10S JS QS KS 10H JH QH KH 10D JD QD KD 8C"


def _hint(url: str, budget_s: float, answers: list[tuple[int, float, int]]) -> None:
    """Ask for one hint: its status, seconds and the items it places."""
    request = urllib.request.Request(
        url, method="POST", headers={"Content-Type": "application/json"},
        data=json.dumps({"rack": HINT_RACK, "initial": False, "budget_s": budget_s}).encode())
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            placed = len(json.loads(answer.read())["placed"])
            answers.append((answer.status, time.monotonic() - started, placed))
    except urllib.error.HTTPError as error:
        answers.append((error.code, time.monotonic() - started, 0))


def hints(database_url: str, count: int, budget_s: float, rounds: int) -> dict[str, Any]:
    """``count`` hints at once, ``rounds`` times, on one match of the real panel."""
    promise = 1.1 * budget_s + 0.05
    with panel(database_url) as (base, _pid):
        match_id = int(_request(base + "/api/matches", {"name": "hints"})["id"])
        _request(f"{base}/api/matches/{match_id}/setup",
                 {"who": "bench", "variant": "raeuber", "players": ["Ana", "Ben"]})
        _request(f"{base}/api/matches/{match_id}/events",
                 {"type": "table", "seat": None, "melds": HINT_TABLE})
        results = []
        for _round in range(rounds):
            answers: list[tuple[int, float, int]] = []
            threads = [threading.Thread(target=_hint, args=(
                f"{base}/api/matches/{match_id}/hint", budget_s, answers))
                for _ in range(count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            answered = [(took, placed) for status, took, placed in answers if status == 200]
            refused = [took for status, took, _ in answers if status == 503]
            results.append({
                "answered": len(answered), "refused": len(refused),
                "other": len(answers) - len(answered) - len(refused),
                "slowest_answer_s": round(max((t for t, _ in answered), default=0.0), 3),
                "slowest_refusal_s": round(max(refused, default=0.0), 3),
                "placed": sorted({placed for _, placed in answered}),
                "over_promise": sum(took > promise for took, _ in answered)
                + sum(took > promise for took in refused),
            })
    return {"hints": count, "budget_s": budget_s, "promise_s": round(promise, 3),
            "rounds": results}


@contextlib.contextmanager
def database(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="tabletop-load-") as folder:
            yield f"sqlite:///{folder}/load.db"
    elif kind == "postgresql":
        sys.path.insert(0, str(ROOT))
        from tests.panel.postgres import throwaway_cluster

        with throwaway_cluster() as url:
            yield url
    else:
        yield kind


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--database", default="sqlite",
                        help="sqlite, postgresql (a throwaway cluster) or a SQLAlchemy URL")
    parser.add_argument("--stalled", type=int, default=0,
                        help="instead: the panel's memory with this many viewers that"
                             " never read, before, while and after")
    parser.add_argument("--hints", type=int, default=0,
                        help="instead: this many hints asked at once, --rounds times")
    parser.add_argument("--budget", type=float, default=2.0, help="each hint's seconds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.hints:
        with database(args.database) as url:
            asked = hints(url, args.hints, args.budget, args.rounds)
        if args.json:
            print(json.dumps(asked))
            return 0
        print(f"{asked['hints']} hints at once, {asked['budget_s']:g} s each"
              f" (promise {asked['promise_s']:g} s):")
        for number, round_ in enumerate(asked["rounds"], 1):
            print(f"  round {number}: {round_['answered']} answered (slowest"
                  f" {round_['slowest_answer_s']:.3f} s, placing {round_['placed']}),"
                  f" {round_['refused']} refused (slowest {round_['slowest_refusal_s']:.3f} s),"
                  f" {round_['other']} other; over the promise: {round_['over_promise']}")
        return 0
    if args.stalled:
        with database(args.database) as url:
            memory = stalled(url, args.stalled, args.writers, args.seconds)
        if args.json:
            print(json.dumps(memory))
        else:
            print(f"{memory['database']}, {memory['stalled']} viewers that never read;"
                  f" panel {memory['mb_before']} MB before")
            for number, round_ in enumerate(memory["rounds"], 1):
                print(f"  round {number}: {round_['writes_per_second']:.1f} writes/s,"
                      f" p99 {round_['p99_ms']:.0f} ms; {round_['mb_while']} MB while,"
                      f" {round_['mb_after']} MB after they closed")
        return 0
    with database(args.database) as url:
        result = bench(url, args.viewers, args.writers, args.seconds)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['database']}, {result['writers']} writers:")
    for run in result["runs"]:
        print(f"  {run['viewers']:4d} viewers: {run['writes_per_second']:7.1f} writes/s,"
              f" p50 {run['p50_ms']:.0f} ms, p99 {run['p99_ms']:.0f} ms,"
              f" {run['pushes']} pushes of {run['bytes_per_push']} B,"
              f" {run['viewers_dropped']} viewers dropped,"
              f" {run['retried']} retried, {run['failed']} failed")
    print(f"  with viewers: {result['rate_with_viewers']:.0%} of the rate without;"
          f" lost {result['lost']}, doubled {result['doubled']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
