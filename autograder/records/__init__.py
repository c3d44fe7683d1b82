"""What a grading run writes down: per-question results (`results`), nbgrader's gradebook (`gradebook`),
the signed journal a run resumes from (`journal`), the report (`report`) and the progress line
(`progress`). Only the run's main process writes them; no process that runs student code can reach them.
"""
