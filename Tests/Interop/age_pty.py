#!/usr/bin/env python3
"""Runs `age` with a pseudo-terminal as its controlling terminal and answers its passphrase prompts.

age reads a passphrase only from a terminal, so the interop tests drive it through a pty:

    age_pty.py PASSPHRASE_FILE age [ARGS...]

The passphrase is read from PASSPHRASE_FILE (never argv or the environment) and typed, followed by
a newline, at every "Enter passphrase" / "Confirm passphrase" prompt. What age shows on the
terminal is copied to stderr; the exit status is age's (124 when it does not finish in 120 s).
"""
import os, pty, re, select, sys, time

def main():
    if len(sys.argv) < 3:
        sys.exit("usage: age_pty.py PASSPHRASE_FILE age [ARGS...]")
    with open(sys.argv[1], "rb") as f:
        passphrase = f.read()
    command = sys.argv[2:]
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    prompt = re.compile(rb"(Enter|Confirm) passphrase[^:]*:")
    seen = b""
    answered = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            continue
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal (it exited)
            break
        if not data:
            break
        seen += data
        prompts = len(prompt.findall(seen))
        while answered < prompts:
            os.write(master, passphrase + b"\n")
            answered += 1
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        sys.stderr.write(seen.decode(errors="replace"))
        sys.exit(124)
    _, status = os.waitpid(pid, 0)
    sys.stderr.write(seen.decode(errors="replace"))
    sys.stderr.write("\n[prompts answered: %d]\n" % answered)
    sys.exit(os.waitstatus_to_exitcode(status))

main()
