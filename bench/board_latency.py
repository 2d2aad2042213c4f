"""Round-trip latency of the emulated scoring board (real firmware in simavr).

Compares the framed protocol's PING (host encodes, CRC, firmware parses and
answers, host decodes and matches the sequence number) with the floor: one
raw ENQ byte answered with ACK by the firmware's receive interrupt, through
the same pty, the same simavr process and the same host reader thread.

    python -m bench.board_latency [--count N]

Prints the median and 95th percentile of both and their ratio.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args(argv)
    # the boot banner is cut when the port opens: expected, not worth a line
    logging.getLogger("device.board").setLevel(logging.ERROR)

    from tabletop.device.driver import Board
    from tabletop.device.emulator import EmulatedBoard, build, toolchain_missing

    missing = toolchain_missing()
    if missing:
        print(f"cannot run: {missing}", file=sys.stderr)
        return 1
    build()
    with EmulatedBoard() as emulator, Board(str(emulator.link)) as board:
        board.wait_connected(5)
        for _ in range(10):  # warm up both paths
            board.ping()
            board.enquire()
        framed, raw = [], []
        for _ in range(args.count):  # interleaved: both see the same conditions
            framed.append(board.ping() * 1000)
            raw.append(board.enquire() * 1000)
    framed_median, raw_median = statistics.median(framed), statistics.median(raw)
    print(
        f"framed PING round trip: median {framed_median:.3f} ms, "
        f"p95 {percentile(framed, 0.95):.3f} ms ({args.count} pings)"
    )
    print(
        f"raw ENQ/ACK round trip: median {raw_median:.3f} ms, "
        f"p95 {percentile(raw, 0.95):.3f} ms (the floor)"
    )
    print(f"ratio framed/raw: {framed_median / raw_median:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
