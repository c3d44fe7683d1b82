"""Whether a test cell's checks really reached the checker.

A test cell runs in the same process as the student's code, which could replace `check_forward` with
a function that does nothing. The checker, forked before any student code ran, reports every verdict
it gives on a pipe only the worker holds. A test cell earns its points only if each check its source
calls (read from the restored, trusted source) was answered by the checker, and passed.
"""

import ast
from collections import Counter

_CHECKS = {"check_forward": "forward", "check_first_derivative": "first_derivative"}
_CHECKS |= {"check_second_derivative": "second_derivative", "check_result": "result"}


def _subject(call: ast.Call) -> str | None:
    """The name a check reports its function under: `name=` if given, else `Square` for `Square.apply`."""
    for keyword in call.keywords:
        if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    if not call.args:
        return None
    function = call.args[0]
    if (
        isinstance(function, ast.Attribute)
        and function.attr == "apply"
        and isinstance(function.value, ast.Name)
    ):
        return function.value.id
    return function.id if isinstance(function, ast.Name) else None


def checks_called(source: str) -> Counter:
    """(kind, subject) of every check call in a test cell; subject None when it cannot be read off."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return Counter()
    calls = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in _CHECKS:
                calls[(_CHECKS[name], _subject(node))] += 1
    return calls


def unvouched(source: str, verdicts: list[dict]) -> str:
    """Why the cell's checks were not all answered and passed by the checker; '' when they were."""
    expected = checks_called(source)
    answered = Counter((v.get("kind"), v.get("subject")) for v in verdicts if v.get("passed") is True)
    missing = []
    for (kind, subject), count in expected.items():
        matching = sum(n for (k, s), n in answered.items() if k == kind and (subject is None or s == subject))
        if matching < count:
            missing.append(f"{kind} of {subject or 'the answer'}")
    if not missing:
        return ""
    return (
        f"the checker never confirmed {', '.join(missing)}: this test's checks did not run as written "
        "(answers may not replace them)"
    )
