"""`python -m autograder doctor`: what this host's confinement would be, and what it lacks with the fix."""

from autograder.__main__ import main
from autograder.sandbox import landlock


def test_the_doctor_says_what_each_missing_landlock_right_is_kept_by(monkeypatch, capsys):
    monkeypatch.setenv(landlock.CAP_VARIABLE, "1")
    assert main(["doctor"]) == 0
    printed = capsys.readouterr().out
    assert (
        f"Landlock ABI: 1 used, the kernel's is {landlock.abi()}, capped by {landlock.CAP_VARIABLE}=1"
        in printed
    )
    assert "ABI 3's truncation by path: kept off by the read-only mounts" in printed
    assert "ABI 6's signal and abstract unix socket scoping: kept by the PID namespace" in printed
    assert printed.endswith("student code is confined here: python -m autograder grade can grade\n")


def test_the_doctor_names_what_is_missing_and_fails(monkeypatch, capsys):
    monkeypatch.setenv(landlock.CAP_VARIABLE, "0")
    assert main(["doctor"]) == 1
    assert capsys.readouterr().out.endswith(
        "missing, so python -m autograder grade refuses (unless --trust-submissions):\n"
        f"- Landlock, which {landlock.CAP_VARIABLE}=0 turns off: unset it\n"
    )


def test_a_cap_that_is_not_a_version_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv(landlock.CAP_VARIABLE, "latest")
    assert main(["doctor"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
