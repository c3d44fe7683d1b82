"""What a run keeps on disk and reads back: a signed journal, a spreadsheet-safe grades.csv, and
submissions found under the names students actually give them."""

import json

import pytest

from autograder.course.submissions import discover
from autograder.records.journal import Journal, Recorded
from autograder.records.results import QuestionResult, Status, read_csv, write_csv

LESSON = "01_saving_inputs"
KEY = ("alice", LESSON, LESSON)


def _rows(score: float) -> list[QuestionResult]:
    return [QuestionResult(*KEY, "square_forward", score, 1.0, Status.OK)]


_BASIS = {"submission": "old bytes", "lesson": "v1", "options": "o1"}


def test_a_resumed_run_ignores_journal_lines_it_did_not_sign(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl", b"this run")
    journal.append(KEY, Recorded(_BASIS, _rows(0.0)))
    honest = json.loads((tmp_path / "journal.jsonl").read_text())
    forged = [
        honest | {"rows": [honest["rows"][0] | {"score": 1.0}]},  # the MAC no longer matches
        # A full mark kept over a resubmission: the basis claims the new bytes were graded.
        honest | {"basis": _BASIS | {"submission": "new bytes"}},
        {"key": list(KEY), "basis": _BASIS, "rows": [honest["rows"][0] | {"score": 1.0}]},  # no MAC
        {key: value for key, value in honest.items() if key != "basis"},  # an earlier version's line
        "not json",
        [1, 2],
    ]
    with open(journal.path, "a") as file:
        file.writelines(json.dumps(line) + "\n" for line in forged)
    assert journal.load() == {KEY: Recorded(_BASIS, _rows(0.0))}
    assert Journal(journal.path, b"another run").load() == {}


def test_a_signed_line_must_still_be_a_row_of_its_own_notebook(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl", b"this run")
    bob = [QuestionResult("bob", LESSON, LESSON, "square_forward", 1.0, 1.0, Status.OK)]
    journal.append(KEY, Recorded(_BASIS, bob))
    carol = [QuestionResult("carol", LESSON, LESSON, "q", 5.0, 1.0, Status.OK)]
    journal.append(("carol", LESSON, LESSON), Recorded(_BASIS, carol))
    assert journal.load() == {}


def test_a_rewritten_journal_holds_only_what_the_run_kept(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl", b"this run")
    for score in (0.0, 1.0):
        journal.append(KEY, Recorded(_BASIS, _rows(score)))
    journal.append(
        ("bob", LESSON, LESSON),
        Recorded(_BASIS, [QuestionResult("bob", LESSON, LESSON, "q", 1.0, 1.0, Status.OK)]),
    )
    journal.rewrite({KEY: Recorded(_BASIS, _rows(1.0))})
    assert len(journal.path.read_text().splitlines()) == 1
    assert journal.load() == {KEY: Recorded(_BASIS, _rows(1.0))}


@pytest.mark.parametrize("text", ['=HYPERLINK("x")', "+1", "-1", "@SUM(A1)", "\tx", "\rx", "'=x", "'plain"])
def test_grades_csv_writes_formulas_as_text_and_reads_back_the_original(tmp_path, text):
    row = QuestionResult(text, LESSON, text, "q", 0.0, 1.0, Status.FAILED, text)
    write_csv([row], tmp_path / "grades.csv")
    cells = (tmp_path / "grades.csv").read_text().splitlines()[1]
    assert not cells.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert ",=" not in cells
    assert ",+" not in cells
    assert read_csv(tmp_path / "grades.csv") == [row]


def test_a_single_notebook_under_another_name_is_graded_as_the_assignments(tmp_path):
    folder = tmp_path / "alice" / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON} (1).ipynb").write_text("{}")
    (submission,), rows = discover(tmp_path)
    assert rows == []
    assert (submission.key, submission.path.name) == (KEY, f"{LESSON} (1).ipynb")
    (explained,) = submission.explained(_rows(1.0))
    assert f"graded from {LESSON} (1).ipynb" in explained.reason


def test_two_notebooks_under_other_names_are_not_guessed_between(tmp_path):
    folder = tmp_path / "alice" / LESSON
    folder.mkdir(parents=True)
    for name in ("one", "two"):
        (folder / f"{name}.ipynb").write_text("{}")
    (submission,), rows = discover(tmp_path)
    assert submission.path is None
    assert sorted(row.notebook for row in rows) == ["one", "two"]
