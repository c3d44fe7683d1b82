"""What the instructor sets for the service in the course's nbgrader_config.py, as `c.Serve.NAME`."""

from traitlets import Bool, Dict, Enum, Float, Int, Unicode
from traitlets.config import Configurable


class Serve(Configurable):
    """The service's settings, read with the course's nbgrader configuration."""

    users = Dict(
        value_trait=Unicode(),
        key_trait=Unicode(),
        help="Student id -> the Unix user whose entries in inbound count as theirs (default: the user "
        "named like the id).",
    ).tag(config=True)
    trust_student_names = Bool(
        False,
        help="Credit an entry to the student it names, whoever owns it: only where every student's "
        "server writes inbound as one shared uid.",
    ).tag(config=True)
    hidden_tests_feedback = Enum(
        ["after_due_date", "always"],
        "after_due_date",
        help="When feedback shows what the hidden tests said: after the assignment's due date, or always.",
    ).tag(config=True)
    graded_per_hour = Int(0, help="Graded submissions per student per hour (0: no limit).").tag(config=True)
    max_notebook_mb = Float(16.0, help="A notebook, or any file, larger than this is refused.").tag(
        config=True
    )
    settle_seconds = Float(
        0.3, help="An entry whose files changed more recently than this is still being written."
    ).tag(config=True)
