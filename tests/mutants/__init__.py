"""Known-wrong answers, one for every mistake a lesson warns about: one module per lesson.

Each module names its `LESSON` and lists its `MUTANTS`. A mutant is the lesson's own solution with one
mistake made in it, so mutants follow the solution when it changes (an edit that no longer applies fails
loudly). `loses` names the test cells that must score zero for it.

A module also lists its `INSTRUCTIONS`: each instruction or warning of the lesson's exercise text, in the
text's own words, mapped to the mutant that breaks it. An instruction with no mutant is one no test
enforces; a mapping makes that visible in review, and the tests check both ends. A preference, which a
correct answer may ignore, says "prefer" and maps to that answer in tests/alternatives, which keeps full
marks.
"""

import importlib
import pkgutil

_LESSONS = [
    module
    for module in (
        importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
    )
    if hasattr(module, "LESSON")
]
MUTANTS = {module.LESSON: module.MUTANTS for module in _LESSONS}
INSTRUCTIONS: dict[str, dict[str, str]] = {
    module.LESSON: module.INSTRUCTIONS for module in _LESSONS if hasattr(module, "INSTRUCTIONS")
}
