#!/usr/bin/python3
"""term: a terminal's keystroke echo latency (docs/bench.md).

    term.py BUILD SOCKET RUNS

One byte written to `fencectl term` of an L1.5 fence whose terminal
runs `cat` in raw mode without echo, timed until the byte comes back:
through fencectl, the control socket, the broker, the agent and the
fence's pseudo-terminal, and back.  The anchor: the same `cat` on a
pseudo-terminal of the host, written and read by this same program.
Each is run on a pseudo-terminal of this program's (pty.fork()), so
both sides pay for one terminal of the host the same way.  The rows go
to the table with bench/rows.subr (BENCH_OUT), in microseconds.
"""
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time

KEY = "bench-term"
CAT = "stty raw -echo; echo ready; exec cat"


def spawn(argv):
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    return pid, fd


def read_until(fd, want, secs):
    got = b""
    end = time.monotonic() + secs
    while want not in got:
        left = end - time.monotonic()
        if left <= 0:
            raise TimeoutError("no %r in %d s: %r" % (want, secs, got[-200:]))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            b = os.read(fd, 4096)
            if not b:
                raise EOFError("ended: %r" % got[-200:])
            got += b
    return got


def echo_us(fd, runs):
    """runs round trips of one byte; microseconds each."""
    out = []
    for i in range(runs):
        c = bytes([0x61 + i % 26])
        t0 = time.monotonic_ns()
        os.write(fd, c)
        got = b""
        while c not in got:
            r, _, _ = select.select([fd], [], [], 10)
            if not r:
                raise TimeoutError("no echo in 10 s")
            got += os.read(fd, 64)
        out.append((time.monotonic_ns() - t0) / 1000)
    return out


def rows(section, name, anchor, samples):
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write("".join("%.3f\n" % s for s in samples))
    subprocess.run(["sh", "-c", '. bench/rows.subr; bench_rows "$@"', "sh",
                    section, name, anchor, "median", f.name], check=True)
    os.unlink(f.name)
    s = sorted(samples)
    print("%-44s %6d %10.3f %10.3f" % (name, len(s), s[(len(s) - 1) // 2]
                                      / 1000, s[min(len(s) - 1,
                                                   (len(s) * 99 + 99) // 100
                                                   - 1)] / 1000))


def skip(section, name, why):
    print("%-44s skipped: %s" % (name, why))
    subprocess.run(["sh", "-c", '. bench/rows.subr; bench_rows_skip "$@"',
                    "sh", section, name, why], check=True)


def stop(pid, fd):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    os.close(fd)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    build, sock, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    runs = max(20, min(runs, 2000))
    ctl = [os.path.join(build, "bin", "fencectl"), "-s", sock]
    anchor = "host pty, cat, 1 byte echo"
    print("%-44s %6s %10s %10s" % ("terminal", "n", "median ms", "p99 ms"))

    pid, fd = spawn(["sh", "-c", CAT])
    read_until(fd, b"ready", 10)
    echo_us(fd, 10)
    rows("terminal", anchor, "", echo_us(fd, runs))
    stop(pid, fd)

    name = "fencectl term, cat in an L1.5 fence, 1 byte echo"
    subprocess.run(ctl + ["stop", KEY], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    b = subprocess.run(ctl + ["boot", KEY, "tier", "L1.5"],
                       capture_output=True, text=True)
    if b.returncode != 0:
        skip("terminal", name, "boot: " + (b.stderr or b.stdout).strip())
        return 0
    pid, fd = spawn(ctl + ["term", KEY, "--", "sh", "-c", CAT])
    try:
        read_until(fd, b"ready", 20)
        echo_us(fd, 10)
        rows("terminal", name, anchor, echo_us(fd, runs))
    except (TimeoutError, EOFError) as e:
        skip("terminal", name, str(e).replace("\n", " ")[:200])
    finally:
        stop(pid, fd)
        subprocess.run(ctl + ["stop", KEY], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
