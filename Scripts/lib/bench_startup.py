#!/usr/bin/env python3
"""Start-up benchmarks (run by Scripts/bench on release builds): each tool's --version, and the
offline reads a person runs most, next to `sqlite3 :memory: 'select 1'` (the floor) measured in the
same run, with the hardened build (PIE, full RELRO). Goals, as medians relative to the floor (a
person cannot tell 1.5 ms from 3 ms): every --version <= 2x; raxx-auth status, raxx-cache status and
raxx-cache show portfolio <= 3x. Each command's page faults are printed
beside (median of 20 runs), next to the floor's.

Usage: bench_startup.py BIN_DIR WORK_DIR
"""
import json
import os
import shlex
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
goals = {"--version": 2.0, "raxx-auth status": 3.0, "raxx-cache status": 3.0, "raxx-cache show portfolio": 3.0}
out = os.path.join(work, "startup.json")
print("bench: start-up (hyperfine, 30 warm-up runs, 300 runs each)…", file=sys.stderr)
subprocess.run(["hyperfine", "-N", "--warmup", "30", "--runs", "300", "--style", "none", "--export-json", out, *commands],
               env=env, check=True, stdout=subprocess.DEVNULL)
results = json.load(open(out))["results"]
reference = statistics.median(results[0]["times"]) * 1000


def page_faults(command, runs=20):
    """The median of a command's page faults (minor and major, from its rusage) over `runs` runs:
    how much of the executable and its libraries a start-up brings in."""
    argv = shlex.split(command)
    devnull = os.open(os.devnull, os.O_WRONLY)
    counts = []
    for _ in range(runs):
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, _, usage = os.wait4(pid, 0)
        counts.append(usage.ru_minflt + usage.ru_majflt)
    os.close(devnull)
    return int(statistics.median(counts))


def short(command):
    return command.replace(bin_dir + "/", "").replace(" --json", "")


faults = {short(r["command"]): page_faults(r["command"]) for r in results}
print("\nStart-up: median of 300 runs (release, static Swift stdlib), next to the floor in the same run;"
      " page faults, median of 20")
print(f"{'command':<40}{'median':>10}{'p90':>10}{'vs floor':>10}{'faults':>8}  goal")
failed = False
for r in results:
    times = sorted(r["times"])
    med = statistics.median(times) * 1000
    p90 = times[int(len(times) * 0.9)] * 1000
    name = short(r["command"])
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
    print(f"{name:<40}{med:>8.2f}ms{p90:>8.2f}ms{ratio:>9.2f}x{faults[name]:>8}  {verdict}")
rows = {short(r["command"]): statistics.median(r["times"]) * 1000 for r in results}
versions = [k for k in rows if k.endswith("--version")]
slowest = max(versions, key=lambda k: rows[k])
print()
benchlib.result("start-up, slowest --version", f"{rows[slowest]:.2f} ms", "sqlite3 select 1", f"{reference:.2f} ms",
                f"{rows[slowest] / reference:.2f}x", f"<= {goals['--version']:g}x", rows[slowest] / reference <= goals["--version"],
                "median of 300",
                f"{slowest}; {faults[slowest]} page faults, sqlite3 {faults[floor]}")
for name in ("raxx-auth status", "raxx-cache status", "raxx-cache show portfolio"):
    goal = goals[name]
    benchlib.result(f"start-up, {name}", f"{rows[name]:.2f} ms", "sqlite3 select 1", f"{reference:.2f} ms",
                    f"{rows[name] / reference:.2f}x", f"<= {goal:g}x", rows[name] / reference <= goal, "median of 300",
                    f"{faults[name]} page faults, sqlite3 {faults[floor]}")
sys.exit(1 if failed else 0)
