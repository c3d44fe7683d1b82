"""Correct answers written otherwise than the solution, as students write them: one module per lesson.

Each module names its `LESSON` and lists its `ALTERNATIVES`, made like mutants (`rewrites_of`) but
losing nothing: new-style Functions where the lesson writes old-style ones and the other way round,
torch.func, helper functions, gradients accumulated in place into a fresh tensor,
`ctx.set_materialize_grads(False)`. Each must score full marks.
"""

import importlib
import pkgutil

ALTERNATIVES = {
    module.LESSON: module.ALTERNATIVES
    for module in (
        importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
    )
    if hasattr(module, "LESSON")
}
