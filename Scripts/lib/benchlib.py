"""Shared pieces of the Raxx benchmarks."""
import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

# Rounds of the benchmarks that alternate a reference and a tool and compare medians (the full
# refresh, the orders, the pushes): RAXX_BENCH_ROUNDS, 3 unless set.
ROUNDS = max(1, int(os.environ.get("RAXX_BENCH_ROUNDS", "3")))


def rounds(default):
    """RAXX_BENCH_ROUNDS when set, else a benchmark's own default (the orders' 5)."""
    return max(1, int(os.environ.get("RAXX_BENCH_ROUNDS", str(default))))


def percentile(values, p):
    """The p-th percentile of values (nearest rank)."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def rates(values):
    """Each round's rate, for a result line: "548, 356, 448"."""
    return ", ".join(f"{v:.0f}" for v in values)


def round_ratios(reference, ours):
    """Each round's figure over its reference's, for a result line: "0.67x, 1.09x, 0.88x"."""
    return ", ".join(f"{o / r:.2f}x" for r, o in zip(reference, ours))


def copy_database(source, destination):
    """Copies a WAL database whole: its log checkpointed into the file first (refused if that could
    not finish), on a connection closed before the copy. Closing any descriptor of a database file
    drops every POSIX lock this process holds on it, SQLite's too: a connection left open across
    the copy later read its database as malformed."""
    with contextlib.closing(sqlite3.connect(source)) as con:
        busy, frames, copied = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy or frames != copied:
        sys.exit(f"bench: the log of {source} could not be checkpointed ({busy}, {frames}, {copied})")
    shutil.copyfile(source, destination)


# Linux carries a process's RSS high-water mark across exec, so a child forked from a (large)
# Python would report at least that Python's RSS. A small helper forks the command instead and
# writes the command's own time, peak RSS and exit status to a file.
_MEASURE = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{time.perf_counter() - start} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def measure(command, env, stdin=None, stdout=None, stderr=None):
    """Runs command; answers (seconds, peak RSS in MiB, exit status) of that command alone."""
    with tempfile.NamedTemporaryFile("r", suffix=".measure") as result:
        subprocess.run([sys.executable, "-c", _MEASURE, result.name, *command], env=env,
                       stdin=stdin, stdout=stdout, stderr=stderr, check=True)
        seconds, rss, status = result.read().split()
    return float(seconds), int(rss) / 1024, int(status)


def emailed_code(mail_dir, email, after, timeout=30):
    """The one-time code in the first message to `email` in the sandbox's Maildir after the first
    `after` of them (waits for it, up to `timeout` seconds)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        messages = []
        folder = os.path.join(mail_dir, "new")
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
                text = f.read()
            if f"\r\nTo: <{email}>\r\n" in "\r\n" + text:
                messages.append(text)
        for text in messages[after:]:
            for line in text.split("\r\n\r\n", 1)[-1].splitlines():
                if line.strip().isdigit() and 6 <= len(line.strip()) <= 10:
                    return line.strip()
        time.sleep(0.02)
    raise RuntimeError(f"no code was emailed to {email} in {mail_dir}")


def mail_count(mail_dir, email):
    folder = os.path.join(mail_dir, "new")
    count = 0
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
            count += f"\r\nTo: <{email}>\r\n" in "\r\n" + f.read()
    return count


def register(bin_dir, env, email, mail_dir):
    """Creates the account's passkey and signs in: the code the sandbox emails (read from its
    Maildir, `mail_dir`) and the PIN on file descriptors."""
    before = mail_count(mail_dir, email)
    code_r, code_w = os.pipe()
    pin_r, pin_w = os.pipe()
    os.write(pin_w, b"246813\n")
    os.close(pin_w)
    process = subprocess.Popen([os.path.join(bin_dir, "raxx-auth"), "register", "--email", email,
                                "--code-fd", str(code_r), "--pin-fd", str(pin_r)],
                               env=env, stdout=subprocess.DEVNULL, pass_fds=(code_r, pin_r))
    os.close(code_r)
    os.close(pin_r)
    os.write(code_w, (emailed_code(mail_dir, email, before) + "\n").encode())
    os.close(code_w)
    if process.wait() != 0:
        raise RuntimeError(f"raxx-auth register --email {email} failed")


def order_spans(rows):
    """Each order's span from raxx-order's journal rows of one run, (its entry's time, its
    answer's time): (when it could go out, when its answer came). An order's entry is written
    while the order before it is at the server, so it could go out at its entry or at the answer
    before it, whichever came later. In the order they were answered."""
    spans, answered = [], None
    for entry, answer in sorted(rows, key=lambda r: r[1]):
        spans.append((entry if answered is None else max(entry, answered), answer))
        answered = answer
    return spans


# The tools a person starts most, as the start-up benchmark times them: each tool's --version,
# then the offline reads (on a signed-in home with a filled cache, `filled_home`).
STARTUP_TOOLS = ["raxx-auth", "raxx-cache", "raxx-order", "raxx-notify", "raxx-dsr", "raxx-sandbox"]
STARTUP_READS = [["raxx-auth", "status", "--json"], ["raxx-cache", "status", "--json"],
                 ["raxx-cache", "show", "portfolio", "--json"]]


def startup_commands(bin_dir):
    """Each start-up command, as an argv: the --versions, then the reads."""
    return ([[os.path.join(bin_dir, t), "--version"] for t in STARTUP_TOOLS]
            + [[os.path.join(bin_dir, r[0]), *r[1:]] for r in STARTUP_READS])


def filled_home(bin_dir, work, email="startup@raxx.app"):
    """A signed-in RAXX_HOME (work/home) whose cache holds 200 positions and 2,000 fills, refreshed
    from a sandbox (work/sandbox.sqlite) that is stopped again: the reads run offline, as they are
    meant to. Answers the environment to run the tools in (RAXX_HOME and RAXX_API_URL set)."""
    db = os.path.join(work, "sandbox.sqlite")
    env = dict(os.environ, RAXX_HOME=os.path.join(work, "home"))

    def tool(name, *args, **kw):
        return subprocess.run([os.path.join(bin_dir, name), *args], env=env, check=True, **kw)

    tool("raxx-sandbox", "seed", "--db", db, "--email", email, "--positions", "200", "--fills", "2000",
         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = subprocess.Popen([os.path.join(bin_dir, "raxx-sandbox"), "serve", "--port", "0", "--db", db],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        env["RAXX_API_URL"] = server.stdout.readline().strip().removeprefix("listening on ")
        register(bin_dir, env, email, os.path.join(work, "mail"))
        tool("raxx-cache", "refresh", "--quiet")
    finally:
        server.terminate()
        server.wait()
    return env


def mint_token(db, email, session_id):
    """A bearer token for curl, minted straight into the sandbox database (raxx-auth never
    reveals its own). Answers (token, account id)."""
    token = "bench-" + os.urandom(16).hex()
    with sqlite3.connect(db) as con:
        user, = con.execute("SELECT id FROM users WHERE email = ?", (email,)).fetchone()
        account, = con.execute("SELECT id FROM accounts WHERE user_id = ?", (user,)).fetchone()
        con.execute("INSERT INTO sessions (id, user_id, access_token_hash, access_expires_at, renewal_token_hash, created_at, expires_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session_id, user, hashlib.sha256(token.encode()).hexdigest(), time.time() + 86400,
                     hashlib.sha256(os.urandom(16)).hexdigest(), time.time(), time.time() + 86400))
    return token, account


def server_folder(url):
    """The folder name the tools keep a server's cache and journal under (APIEndpoint.storageKey):
    http://127.0.0.1:8080 -> http_127.0.0.1_8080."""
    scheme, rest = url.split("://", 1)
    host_port = rest.split("/", 1)[0]
    host, _, port = host_port.rpartition(":") if ":" in host_port else (host_port, "", "")
    default = "443" if scheme == "https" else "80"
    key = ("" if scheme == "https" else scheme + "_") + host.lower() + (f"_{port}" if port and port != default else "")
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in key)


def account_folder(home, url, kind):
    """The folder of the account last signed in to `url` from RAXX_HOME `home`, in its `kind`
    ("state" or "cache") folder (AccountFolders): home/kind/<server>/accounts/<account>."""
    server = server_folder(url)
    with open(os.path.join(home, "state", server, "account")) as f:
        account = f.read().strip()
    name = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "".join(f"%{b:02X}" for b in c.encode()) for c in account)
    return os.path.join(home, kind, server, "accounts", name)


def result(measure, figure, floor_name, floor, ratio, goal, ok, rounds="1", extra=""):
    """One row of the bench's verdicts: the measure's figure next to its floor measured in the same
    run, the ratio the goal is set on, the rounds it is the median of, the goal and the verdict.
    Printed, and kept in $RAXX_BENCH_SUMMARY (one JSON line) for Scripts/bench's closing table."""
    verdict = "ok" if ok else "MISSED"
    print(f"  => {measure}: {figure} against {floor_name} {floor}: {ratio} ({rounds}); goal {goal}: {verdict}"
          + (f"; {extra}" if extra else ""))
    summary = os.environ.get("RAXX_BENCH_SUMMARY")
    if summary:
        import json
        with open(summary, "a") as f:
            f.write(json.dumps({"measure": measure, "figure": figure, "floor_name": floor_name, "floor": floor, "ratio": ratio,
                                "rounds": rounds, "goal": goal, "verdict": verdict, "extra": extra}) + "\n")
    return ok


def summary_table(path):
    """The closing table of a bench run (Markdown, as the README keeps it), from $RAXX_BENCH_SUMMARY."""
    import json
    import datetime
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    cores = os.cpu_count()
    print(f"\nSummary: {datetime.date.today().isoformat()}, {cores} cores, release builds, floors measured in the same run\n")
    print("| measure | figure | floor (same run) | ratio | rounds | goal | verdict |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['measure']} | {r['figure']} | {r['floor_name']}: {r['floor']} | {r['ratio']} | {r['rounds']} | {r['goal']} | "
              f"{r['verdict']}{' (' + r['extra'] + ')' if r['extra'] else ''} |")
