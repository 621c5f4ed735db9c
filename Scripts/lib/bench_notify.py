#!/usr/bin/env python3
"""raxx-notify push benchmark (run by Scripts/bench on release builds), next to its reference:

  COUNT pushes (100,000) from JSON Lines to a local `raxx-sandbox apns` over TLS and HTTP/2:
  pushes/s, p50/p99 latency per push and peak RSS of raxx-notify, next to h2load (nghttp2)
  sending the same requests — same headers, same payload, same connections and concurrent streams —
  to the same endpoint in the same run.
  Goals: >= 0.7x h2load's rate, >= 5,000 pushes/s, peak RSS <= 64 MiB.

raxx-notify's per-push latency is its own `latency_ms` (first try to answer); h2load's comes from
its --log-file (microseconds from each request's start to its response's end). Both sides present
the same provider token: raxx-notify mints it and keeps it in the state folder, h2load reads it there.

Usage: bench_notify.py BIN_DIR WORK_DIR [COUNT] [CONNECTIONS] [STREAMS_PER_CONNECTION]
"""
import json
import os
import subprocess
import sys
import time

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
env = dict(os.environ, RAXX_HOME=home)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# The provider key: a P-256 key in PKCS#8 PEM (as Apple's .p8), mode 0600, and its public key.
key = os.path.join(work, f"AuthKey_{key_id}.p8")
public = os.path.join(work, "key.pub.pem")
subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
               check=True, stderr=subprocess.DEVNULL)
os.chmod(key, 0o600)
subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", public], check=True)

tls = os.path.join(work, "tls")
endpoint = subprocess.Popen([os.path.join(bin_dir, "raxx-sandbox"), "apns", "--port", "0", "--tls-dir", tls, "--key-id", key_id,
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
    start = time.perf_counter()
    h2 = subprocess.run(["h2load", "-n", str(count), "-c", str(connections), "-m", str(streams), "-t", "1", "-d", body,
                         "-H", f"authorization: bearer {bearer}", "-H", f"apns-topic: {topic}", "-H", "apns-push-type: alert",
                         "-H", "apns-priority: 10", "-H", f"apns-id: {apns_id}", "--log-file", h2log,
                         f"{url}/3/device/{device}"], capture_output=True, text=True)
    h2_wall = time.perf_counter() - start
    h2_rate = None
    for out_line in h2.stdout.splitlines():
        if out_line.startswith("finished in"):
            h2_rate = float(out_line.split(",")[1].split()[0])
        if out_line.startswith("status codes:"):
            h2_status = out_line.strip()
    with open(h2log) as f:
        rows = [r.split("\t") for r in f.read().splitlines() if r]
    h2_ok = sum(1 for r in rows if r[1] == "200")
    h2_latency = [int(r[2]) / 1000 for r in rows]
    if h2_rate is None:
        h2_rate = count / h2_wall

    # raxx-notify push: COUNT lines through one process; its peak RSS from wait4.
    lines = os.path.join(work, "pushes.jsonl")
    with open(lines, "w") as f:
        for _ in range(count):
            f.write(line + "\n")
    results = os.path.join(work, "results.jsonl")
    with open(lines) as stdin, open(results, "w") as stdout:
        start = time.perf_counter()
        ours = subprocess.Popen(push, env=env, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(ours.pid, 0)
        wall = time.perf_counter() - start
    ours.returncode = os.waitstatus_to_exitcode(status)
    delivered, latency = 0, []
    with open(results) as f:
        for r in map(json.loads, f):
            if r["status"] == "delivered":
                delivered += 1
                latency.append(r["latency_ms"])
    rss_mib = usage.ru_maxrss / 1024
    our_rate = count / wall
finally:
    endpoint.terminate()
    endpoint.wait()

print(f"\nPushing {count:,} notifications (release) to raxx-sandbox apns on loopback, TLS + HTTP/2, "
      f"{connections} connections x {streams} streams")
print(f"  h2load, same requests (reference)  {h2_rate:8.0f} pushes/s  p50 {percentile(h2_latency, 50):7.2f} ms"
      f"  p99 {percentile(h2_latency, 99):7.2f} ms  ({h2_ok} answered 200)")
print(f"  raxx-notify push                   {our_rate:8.0f} pushes/s  p50 {percentile(latency, 50):7.2f} ms"
      f"  p99 {percentile(latency, 99):7.2f} ms  ({delivered} delivered, exit {ours.returncode}; peak RSS {rss_mib:.1f} MiB)")
ratio = our_rate / h2_rate
good = ratio >= 0.7 and our_rate >= 5000 and rss_mib <= 64 and delivered == count
print(f"  {ratio:.2f}x h2load's rate (goals >= 0.7x, >= 5,000/s, RSS <= 64 MiB: {'ok' if good else 'UNDER GOAL'})")
sys.exit(0 if good else 1)
