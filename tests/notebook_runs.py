"""Running a notebook top to bottom, and reading what the run left in it: errors, graphs, plots and the
kernel's peak memory.

The course is run in three places: a fresh Binder environment (test_binder), JupyterLab
(test_jupyterlab) and the lesson benchmark (bench_lessons). All judge a run with these functions, so
they agree on what a good run is.
"""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

SVG = "image/svg+xml"  # what draw_graph's torchviz graphs display as
PNG = "image/png"  # what matplotlib's plots display as


def execute(
    notebook: nbformat.NotebookNode, workdir: Path, kernel_options: dict | None = None, **options
) -> nbformat.NotebookNode:
    """Run every cell, going on past errors, then shut the kernel down; options go to NotebookClient,
    kernel_options to the kernel's launch (e.g. where its own stderr goes)."""
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": workdir}},
        **options,
    )
    # cleanup_kc: also when the caller gave its own kernel manager (`km`), which nbclient would keep.
    client.execute(cleanup_kc=True, **(kernel_options or {}))
    return notebook


def _outputs(notebook):
    for cell in notebook.cells:
        if cell.cell_type == "code":
            for output in cell.outputs:
                yield cell, output


def errors(notebook) -> dict[str, str]:
    """The exception each failing cell raised, by cell id."""
    return {cell.id: output.ename for cell, output in _outputs(notebook) if output.output_type == "error"}


def rendered(notebook, mime: str) -> int:
    """How many outputs display as `mime`."""
    return sum(mime in output.get("data", {}) for _, output in _outputs(notebook))


def wrote_to_stderr(notebook) -> bool:
    return any(output.output_type == "stream" and output.name == "stderr" for _, output in _outputs(notebook))


def unexplained_errors(notebook) -> dict[str, str]:
    """Errors that the release's unanswered exercises do not explain, by cell id (empty when all do).

    An unanswered answer cell still defines its Function, whose methods raise NotImplementedError: cells
    below it that call the Function raise that, and test cells raise the checks' AssertionError saying
    so. Any error above the first answer cell, or any other error, is a fault of the lesson.
    """
    answer_cells = [cell.id for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("solution")]
    order = [cell.id for cell in notebook.cells]
    first_answer = order.index(answer_cells[0]) if answer_cells else len(order)
    return {
        cell.id: f"{output.ename}: {output.evalue}"
        for cell, output in _outputs(notebook)
        if output.output_type == "error"
        and not (
            order.index(cell.id) > first_answer
            and (
                output.ename == "NotImplementedError"
                or (output.ename == "AssertionError" and "NotImplementedError" in output.evalue)
            )
        )
    }


def record_peaks(root: int, peaks: dict[int, int]) -> None:
    """Record in `peaks` each process's peak resident memory (VmHWM, MiB): `root` and its descendants."""
    parents = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:  # the process ended while /proc was read
            continue
        parents[int(status.parent.name)] = (int(fields["PPid"]), fields.get("VmHWM", "0 kB"))
    tree = [root]
    for pid in tree:
        tree += [child for child, (parent, _) in parents.items() if parent == pid]
    for pid in tree:
        if pid in parents:
            peaks[pid] = max(peaks.get(pid, 0), int(parents[pid][1].split()[0]) // 1024)
