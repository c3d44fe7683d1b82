"""Running a notebook's cells in a forked child: a minimal IPython shell that records nbformat outputs.

A Jupyter kernel costs seconds to start and import torch; this shell is built once in the warmed worker
and inherited by every forked child, so running a submission costs only its cells. Outputs are
recorded the way a kernel would send them (streams, displays, execute results, errors), so nbgrader
grades the executed notebook exactly as it grades one run by a kernel.
"""

import io
import sys

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets import Type
from traitlets.config import Config


class _Recorder:
    """The outputs of the cell that is running, in the order they happened."""

    def __init__(self) -> None:
        self.outputs: list[dict] = []

    def stream(self, name: str, text: str) -> None:
        if self.outputs and self.outputs[-1].get("name") == name:
            self.outputs[-1]["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def display(self, data: dict, metadata: dict, execution_count: int | None = None) -> None:
        output = {"output_type": "display_data", "data": data, "metadata": metadata}
        if execution_count is not None:
            output |= {"output_type": "execute_result", "execution_count": execution_count}
        self.outputs.append(output)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self.outputs.append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}
        )


_recorder = _Recorder()


class _Stream(io.TextIOBase):
    """sys.stdout or sys.stderr for student code: text becomes a stream output of the running cell."""

    def __init__(self, name: str) -> None:
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        _recorder.stream(self.name, text)
        return len(text)


class _DisplayPublisher(DisplayPublisher):
    def publish(self, data, metadata=None, *args, **kwargs) -> None:
        _recorder.display(data, metadata or {})


class _DisplayHook(DisplayHook):
    """The value of a cell's last expression becomes its execute_result, as in a kernel."""

    def start_displayhook(self) -> None:
        pass

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        _recorder.display(format_dict, md_dict or {}, execution_count=self.prompt_count)

    def finish_displayhook(self) -> None:
        pass


class ExecutorShell(InteractiveShell):
    displayhook_class = Type(_DisplayHook)
    display_pub_class = Type(_DisplayPublisher)

    def enable_gui(self, gui=None) -> None:
        """Inline figures need no event loop."""

    def _showtraceback(self, etype, evalue, stb: list[str]) -> None:
        _recorder.error(etype.__name__, str(evalue), stb)


def create_shell() -> ExecutorShell:
    """Built once in the warmed worker; every forked child inherits it ready to run.

    Its history is never opened on disk: every notebook's process would inherit the open database,
    shared by all of the instructor's IPython sessions, and student code could write into it.
    """
    shell = ExecutorShell.instance(history_length=0, config=Config(HistoryManager={"enabled": False}))
    shell.enable_matplotlib("inline")
    return shell


def run_cell(shell: ExecutorShell, source: str) -> tuple[list[dict], int]:
    """Run one cell as a kernel would; return its outputs and execution count."""
    _recorder.outputs = []
    sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
    try:
        shell.run_cell(source, store_history=True)
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return _recorder.outputs, shell.execution_count - 1
