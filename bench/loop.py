"""The reference loop on this machine: `python -m bench.loop [--runs 9] [--rounds 3]`.

Issue 44 states its CPU targets at the speed of a machine where a pure-Python reference loop took
41.5 ms; `bench.door` and `bench.paired` time this loop (`bench.common.reference_loop`) around their
servers and print each CPU figure also as `raw × 41.5 / loop ms`. This prints the loop's process CPU
time, median and range of `--runs` runs, in `--rounds` rounds a second apart, and the load average:
on a shared machine it moves with the load (another process on the same core's sibling, cache,
clock), which is why the benchmarks time it beside each server rather than once.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench.common import REFERENCE_LOOP_MS, loop_ms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=9, help="runs per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print("| round | loop ms, median | min–max | × to the reference machine | load average |")
    print("|---:|---:|---|---:|---|")
    for i in range(args.rounds):
        if i:
            time.sleep(1)
        times = loop_ms(args.runs)
        median = statistics.median(times)
        load = Path("/proc/loadavg").read_text()[:14]
        scale = REFERENCE_LOOP_MS / median
        print(f"| {i + 1} | {median:.1f} | {times[0]:.1f}–{times[-1]:.1f} | {scale:.2f} | {load} |")


if __name__ == "__main__":
    main()
