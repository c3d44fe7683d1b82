"""Opening nbgrader's gradebook from the grading run, quickly and quietly."""

import contextlib
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import nbgrader
import nbgrader.api
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.exc import SAWarning


def alembic_head() -> str:
    """The gradebook schema's revision, read from nbgrader's migrations by alembic's API."""
    config = Config()
    config.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()


def stamped_in_process() -> contextlib.AbstractContextManager:
    """While in effect, a gradebook nbgrader creates is stamped with its schema revision read in this
    process. nbgrader asks the `alembic` executable for it, a subprocess that takes about two seconds;
    alembic's API gives the same answer in a few milliseconds."""
    return mock.patch.object(nbgrader.api, "get_alembic_version", alembic_head)


def create(db_url: str) -> None:
    """Create an empty gradebook, stamped with its schema revision like nbgrader stamps it."""
    with stamped_in_process(), opened(db_url):
        pass


class _StopsUnlogged(logging.Handler):
    """SQLAlchemy's log as Python prints it when no one configures logging, less one kind of record:
    a stop (Ctrl-C, SIGTERM) that lands while SQLAlchemy closes a connection is logged by it with a
    traceback, then raised on. The command that was stopped says so in one line; the traceback would
    only bury it."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and not issubclass(record.exc_info[0], Exception):
            return
        logging.lastResort.handle(record)


# Every gradebook this process opens, through `opened` or nbgrader's API, logs to the same logger.
logging.getLogger("sqlalchemy").addHandler(_StopsUnlogged(logging.WARNING))
logging.getLogger("sqlalchemy").propagate = False


@contextlib.contextmanager
def opened(db_url: str) -> Iterator[nbgrader.api.Gradebook]:
    """A gradebook connection. nbgrader's own submission bookkeeping trips SQLAlchemy warnings that
    tell an instructor nothing; they are silenced here, and only here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        with nbgrader.api.Gradebook(db_url) as gradebook:
            yield gradebook
