"""What feedback shows of the hidden tests before the due date: nothing but that they ran.

The graded notebook never holds the hidden tests' source (see `autograder.course.notebooks`). Their
messages, though, can quote inputs and expected values: a student resubmitting against them would
have the hidden tests as an oracle. Before the due date (unless the course says always), a test cell
whose failure came from a hidden test shows its score and a note in place of the message.
"""

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from autograder.course.notebooks import HIDDEN_FAILURE

NOTE = "A hidden test failed here; what it says is shown after the due date."


class WithheldBeforeDueDate(Preprocessor):
    """Replace the outputs of each test cell that a hidden test failed by a note."""

    enabled = Bool(True)

    def preprocess_cell(self, cell, resources, index):
        if cell.metadata.get("gradgrad", {}).get(HIDDEN_FAILURE):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=NOTE + "\n")]
        return cell, resources
