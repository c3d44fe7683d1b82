"""A real Dask cluster on 127.0.0.1, as an instructor starts one: `dask scheduler` and `dask worker`
processes, each in a session of its own so that a test can kill one with everything it started."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

_DASK = Path(sys.executable).with_name("dask")
_START_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(log: Path, text: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while text not in log.read_text():
        assert process.poll() is None, f"{log.name} ended:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"no {text!r} in {log.name}:\n{log.read_text()}"
        time.sleep(0.1)


class DaskCluster:
    """A scheduler at `address`, and the workers `add_worker` starts; all of it is stopped on exit."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder, self.port = folder, port or free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen] = []
        folder.mkdir(parents=True, exist_ok=True)
        self.scheduler = self._start(
            "scheduler", ["scheduler", "--host", "127.0.0.1", "--port", str(self.port)], "Scheduler at:"
        )

    def _start(self, name: str, arguments: list[str], ready: str, env=None) -> subprocess.Popen:
        log = self.folder / f"{name}.log"
        with open(log, "w") as output:
            process = subprocess.Popen(
                [str(_DASK), *arguments, "--no-dashboard"],
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
                env=env,
                start_new_session=True,
            )
        self.processes.append(process)
        _wait_for(log, ready, process)
        return process

    def add_worker(self, name: str, threads: int = 1, env=None) -> tuple[str, subprocess.Popen]:
        """Start a worker (with its nanny) and wait until it has joined; returns its address."""
        port = free_port()
        arguments = ["worker", self.address, "--name", name, "--nthreads", str(threads)]
        arguments += ["--host", "127.0.0.1", "--worker-port", str(port), "--local-directory", name]
        return f"tcp://127.0.0.1:{port}", self._start(name, arguments, "Registered to:", env)

    @staticmethod
    def kill(process: subprocess.Popen) -> None:
        """kill -9 the process and everything it started, as a crashed machine would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        for process in self.processes:
            self.kill(process)

    def __enter__(self) -> "DaskCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
