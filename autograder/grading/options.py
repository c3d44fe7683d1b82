"""What a grading run may use, kept apart from the run so that the command line reads it cheaply."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one notebook may use."""

    cell_timeout: float = 60.0
    notebook_timeout: float = 300.0
    memory_mb: int = 1024
    # Grade without the kernel's confinement where the host lacks it: only for submissions one trusts.
    trusted: bool = False


def default_workers() -> int:
    """The cores this process may use (fewer than the machine's in a container or under taskset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
