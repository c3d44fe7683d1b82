"""Known-wrong answers, one for every mistake a lesson warns about: one module per lesson.

Each module names its `LESSON` and lists its `MUTANTS`. A mutant is the lesson's own solution with one
mistake made in it, so mutants follow the solution when it changes (an edit that no longer applies fails
loudly). `loses` names the test cells that must score zero for it.
"""

import importlib
import pkgutil

MUTANTS = {
    module.LESSON: module.MUTANTS
    for module in (
        importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
    )
    if hasattr(module, "LESSON")
}
