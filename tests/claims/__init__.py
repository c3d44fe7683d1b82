"""Numbers a lesson's text states, each tied to the output of the cell that computes it: one module per
lesson, each naming its `LESSON` and listing its `CLAIMS`.

The test reads the solved notebook as nbgrader executed it (test_grading), so a sentence whose number
drifts from what its cell prints fails the suite instead of misleading a student.
"""

import importlib
import pkgutil
import re
from dataclasses import dataclass

import nbformat


@dataclass(frozen=True)
class Claim:
    """A number the lesson's markdown states and the printed output that shows it.

    `text` and `output` are regular expressions, each with one group: the number as the markdown writes
    it and as a cell prints it. They agree when the printed number, rounded to the decimals the text
    gives, equals the text's; `relative` widens that for a sentence that says "about".
    """

    text: str
    output: str
    relative: float = 0.0

    def disagreement(self, notebook: nbformat.NotebookNode) -> str | None:
        """None when the text and the output agree; otherwise what each says."""
        markdown = " ".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
        printed = "".join(
            output.get("text", "")
            for cell in notebook.cells
            if cell.cell_type == "code"
            for output in cell.outputs
            if output.output_type == "stream"
        )
        stated = re.search(self.text, " ".join(markdown.split()))
        shown = re.search(self.output, printed)
        if stated is None or shown is None:
            return (
                f"{self.text!r} is not in the text" if stated is None else f"{self.output!r} is not printed"
            )
        said, got = stated.group(1), float(shown.group(1))
        decimals = len(said.partition(".")[2])
        if round(got, decimals) == float(said) or abs(got - float(said)) <= self.relative * abs(got):
            return None
        return f"the text says {said} ({stated.group(0)!r}), the notebook prints {shown.group(0)!r}"


CLAIMS = {
    module.LESSON: module.CLAIMS
    for module in (
        importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
    )
    if hasattr(module, "LESSON")
}
