#!/usr/bin/env python3
"""Start-up benchmarks (run by Scripts/bench on release builds): each tool's --version, and the
offline reads a person runs most, next to `sqlite3 :memory: 'select 1'` (the floor) measured in the
same run. Goals, as medians relative to the floor: --version <= 1.5x; raxx-auth status and
raxx-cache status <= 2.5x; raxx-cache show portfolio <= 2x.

Usage: bench_startup.py BIN_DIR WORK_DIR
"""
import json
import os
import statistics
import subprocess
import sys

import benchlib

bin_dir, work = sys.argv[1], sys.argv[2]

# A signed-in home with a filled cache, so that the reads do their real work.
print("bench: a signed-in home with a filled cache (200 positions, 2,000 fills)…", file=sys.stderr)
env = benchlib.filled_home(bin_dir, work)
# The server is gone: the reads below are offline, as they are meant to be.

floor = "sqlite3 :memory: 'select 1'"
commands = [floor] + [" ".join(c) for c in benchlib.startup_commands(bin_dir)]
goals = {"--version": 1.5, "raxx-auth status": 2.5, "raxx-cache status": 2.5, "raxx-cache show portfolio": 2.0}
out = os.path.join(work, "startup.json")
print("bench: start-up (hyperfine, 30 warm-up runs, 300 runs each)…", file=sys.stderr)
subprocess.run(["hyperfine", "-N", "--warmup", "30", "--runs", "300", "--style", "none", "--export-json", out, *commands],
               env=env, check=True, stdout=subprocess.DEVNULL)
results = json.load(open(out))["results"]
reference = statistics.median(results[0]["times"]) * 1000
print("\nStart-up: median of 300 runs (release, static Swift stdlib), next to the floor in the same run")
print(f"{'command':<40}{'median':>10}{'p90':>10}{'vs floor':>10}  goal")
failed = False
for r in results:
    times = sorted(r["times"])
    med = statistics.median(times) * 1000
    p90 = times[int(len(times) * 0.9)] * 1000
    name = r["command"].replace(bin_dir + "/", "").replace(" --json", "")
    ratio = med / reference
    goal = next((g for key, g in goals.items() if key in name), None)
    if r["command"] == floor:
        verdict = "reference (floor)"
    elif goal is None:
        verdict = "-"
    else:
        ok = ratio <= goal
        failed |= not ok
        verdict = f"<= {goal:g}x: {'ok' if ok else 'OVER GOAL'}"
    print(f"{name:<40}{med:>8.2f}ms{p90:>8.2f}ms{ratio:>9.2f}x  {verdict}")
rows = {r["command"].replace(bin_dir + "/", "").replace(" --json", ""): statistics.median(r["times"]) * 1000 for r in results}
versions = [v for k, v in rows.items() if k.endswith("--version")]
print()
benchlib.result("start-up, slowest --version", f"{max(versions):.2f} ms", "sqlite3 select 1", f"{reference:.2f} ms",
                f"{max(versions) / reference:.2f}x", "<= 1.5x", max(versions) / reference <= 1.5, "median of 300")
for name in ("raxx-auth status", "raxx-cache status", "raxx-cache show portfolio"):
    goal = goals[name]
    benchlib.result(f"start-up, {name}", f"{rows[name]:.2f} ms", "sqlite3 select 1", f"{reference:.2f} ms",
                    f"{rows[name] / reference:.2f}x", f"<= {goal:g}x", rows[name] / reference <= goal, "median of 300")
sys.exit(1 if failed else 0)
