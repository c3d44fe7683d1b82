"""What a lesson's test helpers raise when they find what an answer did wrong."""


class AnswerRefusedError(ValueError):
    """A lesson helper's finding about the answer, raised from inside the call a check makes: the
    feedback shows it in the helper's own words, not as an error the answer's code raised."""
