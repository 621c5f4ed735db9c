#!/usr/bin/env python3
"""raxx-notify push benchmark (run by Scripts/bench on release builds), next to its reference:

  COUNT pushes (100,000) from JSON Lines to a local `raxx-sandbox apns` over TLS and HTTP/2:
  pushes/s, p50/p99 latency per push and peak RSS of raxx-notify, next to h2load (nghttp2)
  sending the same requests — same headers, same payload, same connections and concurrent streams —
  to the same endpoint in the same run.
  Each side pinned to its own core (taskset): the endpoint on core 0, the sender (h2load, then
  raxx-notify) on core 1, so neither takes the other's CPU. Rounds alternate the two (3, or
  RAXX_BENCH_ROUNDS), and the median rates are compared; then one unpinned round of each, printed
  beside; and once, libcurl's own ceiling: the curl tool (--parallel, HTTP/2) sending the same
  requests, pinned as the sender is. Goals: >= 0.85x h2load's pinned rate, peak RSS <= 64 MiB.

raxx-notify's per-push latency is its own `latency_ms` (first try to answer); h2load's comes from
its --log-file (microseconds from each request's start to its response's end). Both sides present
the same provider token: raxx-notify mints it and keeps it in the state folder, h2load reads it there.

Usage: bench_notify.py BIN_DIR WORK_DIR [COUNT] [CONNECTIONS] [STREAMS_PER_CONNECTION]
"""
import json
import os
import statistics
import subprocess
import sys
import time

import benchlib

bin_dir, work = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
connections = int(sys.argv[4]) if len(sys.argv) > 4 else 2
streams = int(sys.argv[5]) if len(sys.argv) > 5 else 100
key_id, team_id, topic = "BENCHKEY01", "BENCHTEAM1", "app.raxx.bench"
device = "ab" * 32
apns_id = "B3D1A7C2-0000-4000-8000-000000000000"
payload = {"aps": {"alert": {"title": "Order filled", "body": "Bought 10 AAPL at 190.25"}, "thread-id": "raxx.fill_confirmed"},
           "seq": 1, "type": "fill_confirmed"}
home = os.path.join(work, "home")
ROUNDS = benchlib.ROUNDS
env = dict(os.environ, RAXX_HOME=home)


# The provider key: a P-256 key in PKCS#8 PEM (as Apple's .p8), mode 0600, and its public key.
key = os.path.join(work, f"AuthKey_{key_id}.p8")
public = os.path.join(work, "key.pub.pem")
subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
               check=True, stderr=subprocess.DEVNULL)
os.chmod(key, 0o600)
subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", public], check=True)

# The endpoint on core 0 and the sender on core 1 (on a machine with two cores at least).
cores = os.cpu_count() or 1
pin_endpoint = ["taskset", "-c", "0"] if cores >= 2 else []
pin_sender = ["taskset", "-c", "1"] if cores >= 2 else []

tls = os.path.join(work, "tls")
endpoint = subprocess.Popen(pin_endpoint + [os.path.join(bin_dir, "raxx-sandbox"), "apns", "--port", "0", "--tls-dir", tls, "--key-id", key_id,
                             "--team-id", team_id, "--public-key", public, "--topic", topic,
                             "--max-concurrent-streams", str(streams)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    url = endpoint.stdout.readline().strip().removeprefix("listening on ")
    ca = os.path.join(tls, "ca.pem")
    push = [os.path.join(bin_dir, "raxx-notify"), "push", "--endpoint", url, "--ca-file", ca, "--key-file", key, "--key-id", key_id,
            "--team-id", team_id, "--topic", topic, "--connections", str(connections), "--max-in-flight", str(connections * streams)]

    # One push first: raxx-notify mints the provider token and keeps it for both sides.
    line = json.dumps({"device_token": device, "payload": payload}, separators=(",", ":"))
    subprocess.run(push, env=env, input=line + "\n", check=True, capture_output=True, text=True)
    with open(os.path.join(home, "state", "apns", f"{team_id}.{key_id}.token")) as f:
        bearer = json.load(f)["token"]

    # The reference: h2load, the same request COUNT times.
    body = os.path.join(work, "payload.json")
    with open(body, "w") as f:
        f.write(json.dumps(payload, separators=(",", ":")))
    h2log = os.path.join(work, "h2load.log")
    lines = os.path.join(work, "pushes.jsonl")
    with open(lines, "w") as f:
        for _ in range(count):
            f.write(line + "\n")
    results = os.path.join(work, "results.jsonl")

    def h2load(pin):
        """One h2load run: (pushes/s, answered 200, latencies in ms)."""
        start = time.perf_counter()
        h2 = subprocess.run(pin + ["h2load", "-n", str(count), "-c", str(connections), "-m", str(streams), "-t", "1", "-d", body,
                             "-H", f"authorization: bearer {bearer}", "-H", f"apns-topic: {topic}", "-H", "apns-push-type: alert",
                             "-H", "apns-priority: 10", "-H", f"apns-id: {apns_id}", "--log-file", h2log,
                             f"{url}/3/device/{device}"], capture_output=True, text=True)
        wall = time.perf_counter() - start
        rate = None
        for out_line in h2.stdout.splitlines():
            if out_line.startswith("finished in"):
                rate = float(out_line.split(",")[1].split()[0])
        with open(h2log) as f:
            rows = [r.split("\t") for r in f.read().splitlines() if r]
        return rate or count / wall, sum(1 for r in rows if r[1] == "200"), [int(r[2]) / 1000 for r in rows]

    def raxx_notify(pin):
        """COUNT lines through one raxx-notify push process: (pushes/s, delivered, latencies in ms,
        exit status, peak RSS in MiB)."""
        with open(lines) as stdin, open(results, "w") as stdout:
            wall, rss, status = benchlib.measure(pin + push, env, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL)
        delivered, latency = 0, []
        with open(results) as f:
            for r in map(json.loads, f):
                if r["status"] == "delivered":
                    delivered += 1
                    latency.append(r["latency_ms"])
        return count / wall, delivered, latency, status, rss

    # Rounds alternate the two. One pair of runs is no verdict: on these machines either side's rate
    # moves 10 % and more from one run to the next, so the median rates are compared.
    h2_rates, h2_ok, h2_latency = [], [], []
    our_rates, delivered, latency, exits, rss_mib = [], [], [], [], 0.0
    for _ in range(ROUNDS):
        rate, ok, times = h2load(pin_sender)
        h2_rates.append(rate), h2_ok.append(ok), h2_latency.extend(times)
        rate, n, times, code, rss = raxx_notify(pin_sender)
        our_rates.append(rate), delivered.append(n), latency.extend(times), exits.append(code)
        rss_mib = max(rss_mib, rss)
    h2_rate, our_rate = statistics.median(h2_rates), statistics.median(our_rates)
    # libcurl's own ceiling, the engine raxx-notify keeps: the curl tool sending the same requests
    # (--parallel, 200 at once, HTTP/2 multiplexed), pinned as the sender is, once.
    curl_config = os.path.join(work, "curl.cfg")
    with open(curl_config, "w") as f:
        for _ in range(count):
            f.write(f'url = "{url}/3/device/{device}"\noutput = "/dev/null"\n')
    start = time.perf_counter()
    subprocess.run(pin_sender + ["curl", "-s", "--http2", "--cacert", ca, "-Z", "--parallel-max", str(connections * streams),
                                 "-H", f"authorization: bearer {bearer}", "-H", f"apns-topic: {topic}", "-H", "apns-push-type: alert",
                                 "-H", "apns-priority: 10", "-H", f"apns-id: {apns_id}", "--data-binary", "@" + body, "-K", curl_config],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    curl_rate = count / (time.perf_counter() - start)
    # Unpinned, one round each: the endpoint may run on every core again, and so may the sender.
    if pin_endpoint:
        subprocess.run(["taskset", "-a", "-p", "-c", f"0-{cores - 1}", str(endpoint.pid)], check=True, stdout=subprocess.DEVNULL)
    free_h2, _, _ = h2load([])
    free_ours, free_delivered, _, _, free_rss = raxx_notify([])
    rss_mib = max(rss_mib, free_rss)
finally:
    endpoint.terminate()
    endpoint.wait()


print(f"\nPushing {count:,} notifications (release) to raxx-sandbox apns on loopback, TLS + HTTP/2, "
      f"{connections} connections x {streams} streams, {ROUNDS} alternating rounds (median rate; latencies of all rounds), "
      + ("the endpoint pinned to core 0 and the sender to core 1" if pin_sender else "unpinned (one core)"))
print(f"  h2load, same requests (reference)  {h2_rate:8.0f} pushes/s  p50 {benchlib.percentile(h2_latency, 50):7.2f} ms"
      f"  p99 {benchlib.percentile(h2_latency, 99):7.2f} ms  (rounds: {benchlib.rates(h2_rates)}/s; {min(h2_ok)} of {count} answered 200 at least)")
print(f"  raxx-notify push                   {our_rate:8.0f} pushes/s  p50 {benchlib.percentile(latency, 50):7.2f} ms"
      f"  p99 {benchlib.percentile(latency, 99):7.2f} ms  (rounds: {benchlib.rates(our_rates)}/s; {min(delivered)} of {count} delivered at least, "
      f"exit {max(exits)}; peak RSS {rss_mib:.1f} MiB)")
ratio = our_rate / h2_rate
good = ratio >= 0.85 and rss_mib <= 64 and min(delivered) == count and free_delivered == count
each = benchlib.round_ratios(h2_rates, our_rates)
print(f"  {ratio:.2f}x h2load's rate, median to median (each round: {each}) "
      f"(goals >= 0.85x, RSS <= 64 MiB: {'ok' if good else 'UNDER GOAL'})")
print(f"  libcurl's own ceiling: the curl tool, same requests, --parallel, pinned the same, once: {curl_rate:.0f}/s = "
      f"{curl_rate / h2_rate:.2f}x h2load; raxx-notify push {our_rate / curl_rate:.2f}x it")
print(f"  unpinned, one round each: h2load {free_h2:.0f}/s, raxx-notify push {free_ours:.0f}/s: {free_ours / free_h2:.2f}x")
benchlib.result(f"push, {count:,}, pinned", f"{our_rate:,.0f}/s", "h2load, pinned the same", f"{h2_rate:,.0f}/s", f"{ratio:.2f}x",
                ">= 0.85x, RSS <= 64 MiB", good, f"median of {ROUNDS}: {each}",
                f"peak RSS {rss_mib:.1f} MiB; unpinned {free_ours / free_h2:.2f}x ({free_ours:,.0f}/s against {free_h2:,.0f}/s); "
                f"libcurl's own ceiling (the curl tool, --parallel, pinned) {curl_rate:,.0f}/s = {curl_rate / h2_rate:.2f}x h2load, "
                f"raxx-notify {our_rate / curl_rate:.2f}x it")
sys.exit(0 if good else 1)
