"""Lesson 08: the numbers its text states, each as its cell prints it.

The settings the text restates (task ranges, step counts, learning rates, widths) are the code's own
inputs, not results, and are not listed.
"""

from claims import Claim

LESSON = "08_learning_to_learn"

_NOT_FIRST_ORDER = r"that first-order MAML does not, by width: \["
_IN_COPIES = r"in the tasks' copies of the weights, by width: \["

CLAIMS = [
    Claim(r"is (\d+)% of what MAML keeps at width 10", _NOT_FIRST_ORDER + r"'(\d+)%'"),
    Claim(r"and (\d+)% at width 320", _NOT_FIRST_ORDER + r"(?:'\d+%', ){3}'(\d+)%'\]"),
    Claim(r"the copies make up (\d+)%", _IN_COPIES + r"(?:'\d+%', ){3}'(\d+)%'\]"),
    Claim(
        r"differentiates again, back to the layer's own bias, to (\d+)", r"the layer's bias: \[(\d+\.\d+)\]"
    ),
]
