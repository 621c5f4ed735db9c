#!/usr/bin/env python3
"""raxx-order benchmark (run by Scripts/bench on release builds), next to its reference:

  1,000 intents as JSON Lines placed against a loopback sandbox: orders/s and p50/p99 per order,
  next to the same requests sent by curl with keep-alive in one process, in alternating rounds (5, or
  RAXX_BENCH_ROUNDS), median rate against median rate — goal >= 0.9x curl's rate.

Per-order times for raxx-order come from its own journal (each order's entry, written while the
order before it is at the server, and its answer): from when it could go out (its entry or the
answer before it, whichever came later) to its answer; curl reports its own per-request times.

Usage: bench_orders.py BIN_DIR WORK_DIR [COUNT]
"""
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

import benchlib

bin_dir, work = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
email = "orders@raxx.app"
db = os.path.join(work, "sandbox.sqlite")
env = dict(os.environ, RAXX_HOME=os.path.join(work, "home"), RAXX_TIMEOUT="60s")
ROUNDS = benchlib.rounds(5)


def tool(name, *args, **kw):
    return subprocess.run([os.path.join(bin_dir, name), *args], env=env, check=True, **kw)


def intent(i, prefix):
    # Buys and sells alternate, so cash stays put and no order is refused for buying power.
    return {"symbol": "AAPL", "side": "buy" if i % 2 == 0 else "sell", "qty": 1, "client_order_id": f"{prefix}-{i:05d}"}


tool("raxx-sandbox", "seed", "--db", db, "--email", email, "--positions", "10", "--fills", "100",
     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
server = subprocess.Popen([os.path.join(bin_dir, "raxx-sandbox"), "serve", "--port", "0", "--db", db],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    url = server.stdout.readline().strip().removeprefix("listening on ")
    env["RAXX_API_URL"] = url
    benchlib.register(bin_dir, env, email, os.path.join(os.path.dirname(db), "mail"))
    tool("raxx-cache", "refresh", "--quiet")

    # The reference: the same POSTs from one curl process (keep-alive), with a minted token. One
    # pair of runs is no verdict: either side's rate moved from 275 to 571 orders/s between runs on
    # one day, so the rounds alternate curl and raxx-order and the medians are compared.
    token, _ = benchlib.mint_token(db, email, "ses_bench_orders")
    deadline = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    journal = os.path.join(benchlib.account_folder(os.path.join(work, "home"), env["RAXX_API_URL"], "state"), "orders.sqlite")
    curl_rates, our_rates, curl_times, ours, walls, ok = [], [], [], [], [], 0
    for round_ in range(1, ROUNDS + 1):
        config = os.path.join(work, f"orders{round_}.curl")
        with open(config, "w") as f:
            f.write(f'header = "Authorization: Bearer {token}"\nheader = "Content-Type: application/json"\nsilent\n')
            for i in range(count):
                body = dict(intent(i, f"curl{round_}"), type="market", tif="day", not_after=deadline, mode="paper")
                f.write("next\n" if i else "")
                f.write(f'url = "{url}/api/orders"\ndata = {json.dumps(json.dumps(body))}\noutput = "/dev/null"\n'
                        f'write-out = "%{{time_total}}\\n"\n')
                f.write(f'header = "Authorization: Bearer {token}"\nheader = "Content-Type: application/json"\nsilent\n')
        start = time.perf_counter()
        out = subprocess.run(["curl", "--config", config], check=True, capture_output=True, text=True).stdout
        curl_rates.append(count / (time.perf_counter() - start))
        curl_times += [float(x) * 1000 for x in out.split()]

        prefix = f"raxx{round_}"
        stdin = "\n".join(json.dumps(intent(i, prefix)) for i in range(count)) + "\n"
        start = time.perf_counter()
        placed = subprocess.run([os.path.join(bin_dir, "raxx-order"), "place"], env=env, input=stdin, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        ok += sum(1 for line in placed.stdout.splitlines() if json.loads(line)["result"] == "placed")
        with contextlib.closing(sqlite3.connect(journal)) as con:
            rows = con.execute("""
                SELECT s.at, p.at FROM journal_history s JOIN journal_history p ON p.client_order_id = s.client_order_id
                WHERE s.state = 'sending' AND p.state = 'placed' AND s.client_order_id LIKE ?""", (prefix + "-%",)).fetchall()
        ours += [(p - s) * 1000 for s, p in benchlib.order_spans(rows)]
        first, last = min(s for s, _ in rows), max(p for _, p in rows)
        our_rates.append(len(rows) / (last - first))
finally:
    server.terminate()
    server.wait()

curl_rate, our_rate = statistics.median(curl_rates), statistics.median(our_rates)
print(f"\nPlacing {count:,} orders (release), one process each side, keep-alive, {ROUNDS} alternating rounds (median rate; latencies of all rounds)")
print(f"  curl, same requests (reference)  {curl_rate:8.0f} orders/s  p50 {benchlib.percentile(curl_times, 50):6.2f} ms  p99 {benchlib.percentile(curl_times, 99):6.2f} ms"
      f"  (rounds: {benchlib.rates(curl_rates)}/s)")
print(f"  raxx-order place                 {our_rate:8.0f} orders/s  p50 {benchlib.percentile(ours, 50):6.2f} ms  p99 {benchlib.percentile(ours, 99):6.2f} ms"
      f"  (rounds: {benchlib.rates(our_rates)}/s; {ok} of {count * ROUNDS} placed; {statistics.median(walls):.2f} s for the whole command,"
      f" median, checks and cache refresh included)")
ratio = our_rate / curl_rate
good = ratio >= 0.9 and ok == count * ROUNDS
each = benchlib.round_ratios(curl_rates, our_rates)
print(f"  {ratio:.2f}x curl's rate, median to median (each round: {each}) (goal >= 0.9x: {'ok' if good else 'UNDER GOAL'})")
benchlib.result(f"{count:,} orders placed", f"{our_rate:,.0f}/s", "curl keep-alive", f"{curl_rate:,.0f}/s", f"{ratio:.2f}x",
                ">= 0.9x", good, f"median of {ROUNDS}: {each}")
sys.exit(0 if good else 1)
