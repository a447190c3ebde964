#!/usr/bin/python3
# A terminal for a program that needs one (fencectl term): runs argv
# after "--" on a new pty and follows a script of steps, one a line,
# from the file named first:
#	send TEXT	TEXT with \r, \n, \x03 escapes, to the program
#	expect REGEX	wait (at most 30 s) until its output so far matches
#	resize ROWS COLS	TIOCSWINSZ on our side (SIGWINCH to it)
#	signal NAME	e.g. TERM, to the program
#	wait		until it exits; prints "status N" (signals: 128+N)
#	sleep SECONDS
# Everything it wrote goes to the file named second.  Exits 1 with the
# step that failed.
import codecs, fcntl, os, pty, re, select, signal, struct, sys, termios, time

script, log = sys.argv[1], sys.argv[2]
argv = sys.argv[sys.argv.index('--') + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
out = b''
logf = open(log, 'wb')
status = None


def pump(timeout):
    global out
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return True
    try:
        b = os.read(fd, 65536)
    except OSError:
        b = b''
    if not b:
        return False
    out += b
    logf.write(b)
    logf.flush()
    return True


for line in open(script):
    line = line.rstrip('\n')
    if not line or line.startswith('#'):
        continue
    op, _, arg = line.partition(' ')
    if op == 'send':
        os.write(fd, codecs.escape_decode(arg.encode())[0])
    elif op == 'expect':
        rx = re.compile(arg.encode())
        end = time.time() + 30
        while not rx.search(out):
            if time.time() > end or not pump(0.2) and not rx.search(out):
                print('no %r in %r' % (arg, out[-2000:]))
                sys.exit(1)
    elif op == 'resize':
        rows, cols = arg.split()
        fcntl.ioctl(fd, termios.TIOCSWINSZ,
                    struct.pack('HHHH', int(rows), int(cols), 0, 0))
        os.kill(pid, signal.SIGWINCH)
    elif op == 'signal':
        os.kill(pid, getattr(signal, 'SIG' + arg))
    elif op == 'sleep':
        end = time.time() + float(arg)
        while time.time() < end:
            pump(0.1)
    elif op == 'wait':
        end = time.time() + 30
        while True:
            p, st = os.waitpid(pid, os.WNOHANG)
            if p == pid:
                break
            if time.time() > end:
                print('it did not exit')
                sys.exit(1)
            pump(0.1)
        while pump(0.1) and select.select([fd], [], [], 0)[0]:
            pass
        status = os.waitstatus_to_exitcode(st)
        if status < 0:
            status = 128 - status
        print('status %d' % status)
    else:
        print('bad step %r' % line)
        sys.exit(2)
