"""python -m collie.run -n P [collie-run options] script.py [args]: starts P ranks of a
Python program with the packaged collie-run.  A program ending in .py, or -m module /
-c code, runs under this interpreter; anything else is run as given (as collie-run does)."""
import os
import sys

from ._library import collie_run_binary

_WITH_VALUE = {"-n", "-np", "--timeout", "--bind-to"}


def command(argv):
    """collie-run's argv for ours: the interpreter inserted before a Python program."""
    out = [collie_run_binary()]
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            out.append(a)
            i += 1
            break
        if not a.startswith("-") or a in ("-m", "-c"):
            break
        out.append(a)
        if a in _WITH_VALUE and i + 1 < len(argv):
            out.append(argv[i + 1])
            i += 1
        i += 1
    prog = argv[i:]
    if prog and (prog[0].endswith(".py") or prog[0] in ("-m", "-c")):
        prog = [sys.executable] + prog
    return out + prog


def main(argv=None):
    cmd = command(sys.argv[1:] if argv is None else argv)
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main()
