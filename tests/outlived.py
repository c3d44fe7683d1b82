"""Run a command as a child subreaper and say what it left running.

`python tests/outlived.py REPORT -- COMMAND...` runs COMMAND; every process it starts that outlives its
parent is re-parented here instead of to init. When COMMAND has ended, REPORT gets the exit code and
the command lines of the processes still alive under this one (which are then killed, so a failing
test leaves nothing behind).
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


def _children() -> dict[int, str]:
    """Living (not zombie) children of this process, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] != "Z" and int(fields[1]) == os.getpid():
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
    return found


def main() -> None:
    report, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    code = subprocess.run(command).returncode
    time.sleep(0.5)  # orphans of the last processes to die are re-parented here first
    _reap()
    left = _children()
    Path(report).write_text(json.dumps({"returncode": code, "left_running": list(left.values())}))
    for pid in left:
        os.kill(pid, signal.SIGKILL)


def _reap() -> None:
    """Collect the orphans that have already ended."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


if __name__ == "__main__":
    main()
