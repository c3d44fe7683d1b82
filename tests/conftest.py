"""Shows what the tests measured (peak memory on Binder, time in JupyterLab) at the end of every run."""


def pytest_terminal_summary(terminalreporter):
    """One line per value a test recorded with `record_property`; works across xdist workers."""
    reports = terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", [])
    rows = [
        (report.nodeid, name, value)
        for report in reports
        if report.when == "call"
        for name, value in report.user_properties
    ]
    if rows:
        terminalreporter.write_sep("-", "measurements")
        for nodeid, name, value in sorted(rows):
            terminalreporter.write_line(f"{name}: {value}  {nodeid}")
