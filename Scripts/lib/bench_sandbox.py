#!/usr/bin/env python3
"""raxx-sandbox benchmarks (run by Scripts/bench on release builds), each next to its reference.

  seeding 10,000 positions and 1,000,000 fills, next to sqlite3 importing the same rows (.import
      of CSV files made from the seeded database, into the same schema) — goal: <= 3x sqlite3
  curl pulling every page of the full sync (pages of 5,000, rebuild=true, one keep-alive curl),
      next to sqlite3 -json selecting the same rows from the sandbox's file — goal: <= 2x sqlite3

Usage: bench_sandbox.py BIN_DIR WORK_DIR [POSITIONS FILLS]
"""
import os
import sqlite3
import subprocess
import sys
import time

import benchlib

bin_dir, work = sys.argv[1], sys.argv[2]
positions = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
fills = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
email = "bench@raxx.app"
db = os.path.join(work, "sandbox.sqlite")
env = dict(os.environ, RAXX_HOME=os.path.join(work, "home"))
failed = False
# The tables a seed fills, in an order their references allow.
TABLES = ["positions", "orders", "fills", "change_log"]


def verdict(ok):
    global failed
    failed |= not ok
    return "ok" if ok else "OVER GOAL"


def timed(command, **kw):
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, **kw)
    return time.perf_counter() - start


def sqlite(path, script, **kw):
    return subprocess.run(["sqlite3", path], input=script, text=True, check=True, **kw)


title = ("10,000 positions, 1,000,000 fills" if positions == 10_000 and fills == 1_000_000
         else f"{positions:,} positions, {fills:,} fills")

# Seeding, next to sqlite3 importing the same rows.
print(f"bench: seeding {positions:,} positions and {fills:,} fills…", file=sys.stderr)
seed_seconds = timed([os.path.join(bin_dir, "raxx-sandbox"), "seed", "--db", db, "--email", email,
                      "--positions", str(positions), "--fills", str(fills)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with sqlite3.connect(db) as con:
    counts = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
rows = sum(counts.values())

# The reference's set-up, untimed: the seeded rows as CSV files, and an empty database with the
# sandbox's schema (its indexes too) and the account the rows belong to.
print("bench: writing the seeded rows as CSV, and sqlite3 importing them…", file=sys.stderr)
for t in TABLES:
    with open(os.path.join(work, f"{t}.csv"), "w") as f:
        subprocess.run(["sqlite3", "-csv", db, f"SELECT * FROM {t}"], stdout=f, check=True)
schema = sqlite(db, ".schema", stdout=subprocess.PIPE).stdout
schema = "\n".join(line for line in schema.splitlines() if "sqlite_sequence" not in line)
reference_db = os.path.join(work, "import.sqlite")
sqlite(reference_db, "PRAGMA journal_mode = WAL;\n" + schema + """
ATTACH '%s' AS seeded;
INSERT INTO users SELECT * FROM seeded.users;
INSERT INTO accounts SELECT * FROM seeded.accounts;
""" % db, stdout=subprocess.DEVNULL)
script = "PRAGMA synchronous = NORMAL;\n.mode csv\n" + "".join(f".import {os.path.join(work, t)}.csv {t}\n" for t in TABLES)
import_seconds = timed(["sqlite3", reference_db], input=script, text=True, stdout=subprocess.DEVNULL)
with sqlite3.connect(reference_db) as con:
    imported = sum(con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES)
if imported != rows:
    print(f"bench: sqlite3 imported {imported:,} rows, the seed wrote {rows:,}", file=sys.stderr)
    failed = True
ratio = seed_seconds / import_seconds
print(f"\nSeeding (release): {title}; {rows:,} rows ({', '.join(f'{counts[t]:,} {t}' for t in TABLES)})")
print(f"  sqlite3 .import of the same rows (reference) {import_seconds:8.2f} s  {rows / import_seconds:10,.0f} rows/s")
print(f"  raxx-sandbox seed                            {seed_seconds:8.2f} s  {rows / seed_seconds:10,.0f} rows/s  "
      f"{ratio:.2f}x sqlite3 (goal <= 3x: {verdict(ratio <= 3)})")

# Sync pages: curl pulling every page, next to sqlite3 -json selecting the same rows.
server = subprocess.Popen([os.path.join(bin_dir, "raxx-sandbox"), "serve", "--port", "0", "--db", db],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    url = server.stdout.readline().strip().removeprefix("listening on ")
    token, account = benchlib.mint_token(db, email, "ses_bench")
    with sqlite3.connect(db) as con:
        seqs = [row[0] for row in con.execute("SELECT seq FROM change_log WHERE account_id = ? ORDER BY seq", (account,))]
    page = 5000
    cursors = [0] + [seqs[i - 1] for i in range(page, len(seqs), page)]
    config = os.path.join(work, "curl.conf")
    with open(config, "w") as f:
        f.write(f'header = "Authorization: Bearer {token}"\nsilent\nfail\n')
        for c in cursors:
            f.write(f'url = "{url}/api/sync?cursor={c}&limit={page}&rebuild=true"\noutput = "/dev/null"\n')
    print(f"bench: curl pulling {len(seqs):,} changes in {len(cursors)} pages, and sqlite3 -json selecting them…", file=sys.stderr)
    curl_seconds = timed(["curl", "--config", config])
finally:
    server.terminate()
    server.wait()

# The same rows as the pages carry: each change with its entity's columns, by an index range.
select = f"""
SELECT c.seq, c.entity, c.entity_id AS id, c.op,
       COALESCE(p.symbol, f.symbol, o.symbol) AS symbol, COALESCE(p.qty, f.qty, o.qty) AS qty,
       COALESCE(f.side, o.side) AS side, p.avg_price_ticks, COALESCE(p.updated_at, o.updated_at) AS updated_at,
       COALESCE(f.order_id, '') AS order_id, f.price_ticks, f.filled_at,
       o.client_order_id, o.type, o.limit_price_ticks, o.tif, o.status, o.filled_qty, o.avg_fill_price_ticks,
       o.reject_code, o.mode, o.not_after, o.created_at
FROM change_log c
LEFT JOIN positions p ON c.entity = 'position' AND p.id = c.entity_id
LEFT JOIN fills f ON c.entity = 'fill' AND f.id = c.entity_id
LEFT JOIN orders o ON c.entity = 'order' AND o.id = c.entity_id
WHERE c.account_id = '{account}' AND c.seq > 0 ORDER BY c.seq
"""
sqlite_seconds = timed(["sqlite3", "-json", db, select], stdout=subprocess.DEVNULL)
ratio = curl_seconds / sqlite_seconds
print(f"\nSync pages (release): {title}; {len(seqs):,} changes in {len(cursors)} pages of {page:,}")
print(f"  sqlite3 -json, same rows (reference)         {sqlite_seconds:8.2f} s  {len(seqs) / sqlite_seconds:10,.0f} rows/s")
print(f"  curl pulling every page                      {curl_seconds:8.2f} s  {len(seqs) / curl_seconds:10,.0f} rows/s  "
      f"{ratio:.2f}x sqlite3 (goal <= 2x: {verdict(ratio <= 2)})")
sys.exit(1 if failed else 0)
