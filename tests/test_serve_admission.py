"""Admitting an inbound entry, attacked by its owner, who may change it while the service reads it:
what is copied out of inbound is what was checked. Each file is checked on the descriptor it is copied
from, so a change meanwhile can make the entry refused, never bring in something else."""

import os
import pwd
import threading
from pathlib import Path

import pytest

from autograder.serve.inbound import Entry, RefusedError, admit, parse
from autograder.serve.settings import Serve

LESSON = "01_saving_inputs"
NOTEBOOK = f"{LESSON}.ipynb"
OWN = '{"cells": [], "answer": "her own"}'
CLASSMATES = '{"cells": [], "answer": "a classmate\'s, full marks"}'


@pytest.fixture
def entry(tmp_path) -> Entry:
    """A whole entry of the student's, as `nbgrader submit` leaves it, owned by this test's user."""
    folder = tmp_path / "inbound" / f"alice+{LESSON}+2026-11-26 10:00:00.000000 UTC+x1"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text(OWN)
    (folder / "timestamp.txt").write_text("2026-11-26 10:00:00.000000 UTC")
    return parse(folder)


@pytest.fixture
def settings() -> Serve:
    """The entry's owner, this test's user, is alice's."""
    return Serve(users={"alice": pwd.getpwuid(os.getuid()).pw_name}, max_notebook_mb=0.01)


def test_a_notebook_swapped_for_a_link_while_admitted_never_brings_in_what_it_points_to(
    entry, settings, tmp_path
):
    classmate = tmp_path / "classmate.ipynb"
    classmate.write_text(CLASSMATES)
    spare = tmp_path / "spare"
    spare.mkdir()
    stop = threading.Event()

    def swap() -> None:
        """The owner turns the notebook into a link and back, each an atomic rename."""
        while not stop.is_set():
            (spare / "link").symlink_to(classmate)
            os.replace(spare / "link", entry.path / NOTEBOOK)
            (spare / "plain").write_text(OWN)
            os.replace(spare / "plain", entry.path / NOTEBOOK)

    swapper = threading.Thread(target=swap)
    swapper.start()
    copied, refused = [], []
    (tmp_path / "admitted").mkdir()
    try:
        for attempt in range(400):
            into = tmp_path / "admitted" / str(attempt)
            try:
                admit(entry, {NOTEBOOK}, settings, into)
                copied.append((into / NOTEBOOK).read_text())
            except RefusedError as refusal:
                refused.append(str(refusal))
    finally:
        stop.set()
        swapper.join()
    assert set(copied) == {OWN}
    assert set(refused) == {f"{NOTEBOOK} is a symbolic link"}


def test_a_link_above_the_notebook_and_an_entry_that_is_a_link_are_refused(entry, settings, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / NOTEBOOK).write_text(CLASSMATES)
    (entry.path / "data").symlink_to(elsewhere)
    (tmp_path / "admitted").mkdir()
    with pytest.raises(RefusedError, match=r"^data is a symbolic link$"):
        admit(entry, {NOTEBOOK, f"data/{NOTEBOOK}"}, settings, tmp_path / "admitted" / "1")
    linked = entry.path.with_name(f"alice+{LESSON}+2026-11-26 10:05:00.000000 UTC+x2")
    linked.symlink_to(elsewhere)
    with pytest.raises(RefusedError, match=r"^not a folder: "):
        admit(parse(linked), {NOTEBOOK}, settings, tmp_path / "admitted" / "2")


def test_a_fifo_a_file_of_another_user_and_a_notebook_past_the_limit_are_refused(entry, settings, tmp_path):
    os.mkfifo(entry.path / "pipe.ipynb")
    with pytest.raises(RefusedError, match=r"^pipe\.ipynb is not a regular file$"):
        admit(entry, {NOTEBOOK, "pipe.ipynb"}, settings, tmp_path / "fifo")
    (entry.path / "pipe.ipynb").unlink()
    (entry.path / NOTEBOOK).write_text(" " * int(0.01 * 2**20 + 1))
    with pytest.raises(RefusedError, match=rf"^{NOTEBOOK} is larger than 0.01 MB$"):
        admit(entry, {NOTEBOOK}, settings, tmp_path / "large")
    (entry.path / NOTEBOOK).write_text(OWN)
    assert os.geteuid() == 0, "run as root (as CI does): it gives a file to another user"
    os.chown(entry.path / "timestamp.txt", 4242, 4242)
    with pytest.raises(RefusedError, match=r"^timestamp\.txt is owned by uid 4242, not by alice$"):
        admit(entry, {NOTEBOOK}, settings, tmp_path / "theirs")


def test_an_admitted_entry_is_copied_whole(entry, settings, tmp_path):
    (entry.path / "data").mkdir()
    (entry.path / "data" / "points.csv").write_text("1,2\n")
    admit(entry, {NOTEBOOK, "data/points.csv"}, settings, tmp_path / "admitted")
    copied = {
        p.relative_to(tmp_path / "admitted").as_posix(): p.read_text()
        for p in Path(tmp_path / "admitted").rglob("*")
        if p.is_file()
    }
    assert copied == {
        NOTEBOOK: OWN,
        "timestamp.txt": "2026-11-26 10:00:00.000000 UTC",
        "data/points.csv": "1,2\n",
    }
