"""JupyterLab served as `make lab` serves it (on 127.0.0.1, with a token), and Chromium driving it
through Playwright the way a student works: open a notebook, run it, save it, press Validate.
"""

import os
import pwd
import re
import secrets
import site
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from notebook_runs import PNG, SVG
from playwright.sync_api import Browser, Page, sync_playwright

from autograder.course.layout import REPOSITORY

CHROMIUM = Path("/usr/bin/chromium")
# No sandbox or GPU (root, in a container), and none of the background connections to Google's
# services, which a closed network refuses at every start.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = REPOSITORY / "build" / "screenshots"
# Where JupyterLab shows each kind of picture, and what the pictures are.
PICTURES = {SVG: (".jp-RenderedSVG", "graph"), PNG: (".jp-RenderedImage", "plot")}
_EXECUTED = re.compile(r"\[\d+\]:")
_UNEXECUTED = "[ ]:"
_PROMPTS = ".jp-Notebook .jp-CodeCell .jp-InputPrompt"
# JupyterLab's toast when its setting fetchNews is left at "ask".
NEWS_PROMPT = "get notified about official Jupyter news"


@dataclass(frozen=True)
class JupyterLab:
    url: str
    token: str
    root: Path


def _wait_until_serving(lab: JupyterLab, server: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    request = urllib.request.Request(f"{lab.url}/api/status", headers={"Authorization": f"token {lab.token}"})
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(request, timeout=5):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {seconds} s:\n{log.read_text()[-3000:]}")


# The configuration `make lab-instructor` adds to a student's JupyterLab: nbgrader's instructor tools.
INSTRUCTOR_CONFIG = REPOSITORY / "lab-settings" / "instructor"
# What a student's JupyterLab adds where the course has an exchange: the Assignment List.
EXCHANGE_CONFIG = REPOSITORY / "lab-settings" / "with-exchange"


def _as_user(user: pwd.struct_passwd, config: list[str]) -> tuple[list[str], dict[str, str]]:
    """The interpreter and environment that run JupyterLab as `user`: the system's Python 3.11 with
    this venv's packages, data and configuration, since the venv's own interpreter lies under root's
    home, which they cannot enter."""
    venv = Path(sys.prefix)
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": user.pw_dir,
        "PYTHONPATH": os.pathsep.join([*site.getsitepackages(), str(REPOSITORY)]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "JUPYTERLAB_DIR": str(venv / "share" / "jupyter" / "lab"),
        "JUPYTER_PATH": str(venv / "share" / "jupyter"),
        "JUPYTER_CONFIG_PATH": os.pathsep.join([*config, str(venv / "etc" / "jupyter")]),
    }
    return ["/usr/bin/python3", "-m", "jupyterlab"], environment


@contextmanager
def jupyterlab(
    root: Path, scratch: Path, config: Path | None = None, user: pwd.struct_passwd | None = None
) -> Iterator[JupyterLab]:
    """A JupyterLab server serving `root` on 127.0.0.1 with a token, with `make lab`'s options and the
    configuration in `config` (e.g. `make lab-instructor`'s), run as root or as `user`.

    Its user settings and workspaces live in `scratch` (which `user` must be able to write), so a
    developer's own theme or open tabs cannot change what the tests see.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    lab = JupyterLab(f"http://127.0.0.1:{port}", secrets.token_hex(16), root)
    options = [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={lab.token}",
        f"--ServerApp.root_dir={root}",
    ]
    configs = [] if config is None else [str(config)]
    if user is None:
        command = [Path(sys.executable).with_name("jupyter"), "lab"]
        environment = os.environ | ({"JUPYTER_CONFIG_PATH": configs[0]} if configs else {})
        if os.geteuid() == 0:
            options.append("--allow-root")
        as_user = {}
    else:
        command, environment = _as_user(user, configs)
        as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    environment |= {
        "JUPYTERLAB_SETTINGS_DIR": str(scratch / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(scratch / "workspaces"),
    }
    log = scratch / "jupyterlab.log"
    with open(log, "w") as output:
        server = subprocess.Popen(
            [*command, *options],
            cwd=root,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            **as_user,
        )
    try:
        _wait_until_serving(lab, server, log)
        yield lab
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless; Playwright's own browser download cannot be relied on."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium with `sudo apt-get install -y chromium` "
            "(`make test` installs it when run as root)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Notebook:
    """A notebook open in JupyterLab in one browser page, used through the menus a student uses."""

    def __init__(self, page: Page, lab: JupyterLab, path: str):
        self.page, self.lab, self.path = page, lab, path

    def open(self) -> None:
        """Open the notebook and wait until its kernel is ready.

        Each notebook gets a workspace of its own, so that JupyterLab reopens no notebook from before.
        """
        workspace = re.sub(r"\W", "-", self.path)
        self.page.goto(f"{self.lab.url}/lab/workspaces/{workspace}/tree/{self.path}?token={self.lab.token}")
        self.page.get_by_text("| Idle").wait_for(timeout=120_000)

    def news_prompt_shown(self) -> bool:
        """Whether JupyterLab asks, over the lesson, to fetch Jupyter news (the course's settings say no)."""
        return self.page.get_by_text(NEWS_PROMPT).count() > 0

    def _menu(self, menu: str, item: str) -> None:
        self.page.get_by_role("menuitem", name=menu, exact=True).click()
        label = re.compile(rf"^{re.escape(item)}$")  # the label alone: the shortcut is beside it
        self.page.locator(".lm-Menu-itemLabel", has_text=label).click()

    def menu_items(self, menu: str) -> list[str]:
        """The items a main menu shows (hidden ones left out), or [] if the menu bar has no such menu."""
        titles = self.page.locator(".lm-MenuBar-itemLabel")
        if menu not in [title.strip() for title in titles.all_text_contents()]:
            return []
        titles.filter(has_text=re.compile(rf"^{re.escape(menu)}$")).click()
        opened = self.page.locator(".lm-Menu.lm-MenuBar-menu")
        # A shown item's text, then its shortcut after a tab; hidden items have no text shown.
        shown = [line.split("\t")[0].strip() for line in opened.inner_text().splitlines()]
        self.page.keyboard.press("Escape")
        return [label for label in shown if label]

    def has_validate_button(self) -> bool:
        return self.page.locator(".validate-button").count() > 0

    def _prompts(self) -> list[str]:
        return [text.strip() for text in self.page.locator(_PROMPTS).all_text_contents()]

    def _wait_for_run_from(self, index: int) -> None:
        """Until the code cell at `index` has run and no cell is running or queued (`[*]`)."""
        self.page.wait_for_function(
            """([selector, index]) => {
                const prompts = [...document.querySelectorAll(selector)].map(p => p.textContent);
                return /\\[\\d+\\]/.test(prompts[index]) && !prompts.some(p => p.includes("*"));
            }""",
            arg=[_PROMPTS, index],
            timeout=300_000,
        )

    def run_all(self) -> None:
        """Run All Cells, then, since JupyterLab drops the cells queued after one that fails, go on
        from the first cell left unrun (Run Selected Cell and All Below) until every code cell ran."""
        self._menu("Run", "Run All Cells")
        self._wait_for_run_from(0)
        while _UNEXECUTED in (prompts := self._prompts()):
            first_unrun = prompts.index(_UNEXECUTED)
            self.page.locator(_PROMPTS).nth(first_unrun).click()
            self._menu("Run", "Run Selected Cell and All Below")
            self._wait_for_run_from(first_unrun)
        assert all(_EXECUTED.fullmatch(prompt) for prompt in self._prompts()), self._prompts()

    def save(self) -> nbformat.NotebookNode:
        """Save from the File menu; the notebook as JupyterLab wrote it, outputs included."""
        self._menu("File", "Save Notebook")
        self.page.locator(".lm-DockPanel-tabBar .jp-mod-current.jp-mod-dirty").wait_for(state="detached")
        return nbformat.read(self.lab.root / self.path, as_version=4)

    def pictures_shown(self, mime: str) -> int:
        """How many pictures of this kind the browser decoded and laid out."""
        area, _ = PICTURES[mime]
        return self.page.locator(f".jp-Notebook {area} img").evaluate_all(
            "images => images.filter(image => image.complete && image.naturalWidth > 0).length"
        )

    def _screenshot_first(self, selector: str, name: str) -> None:
        element = self.page.locator(f".jp-Notebook {selector}").first
        # Cells out of view are laid out only once scrolled to, which moves what is below them.
        element.scroll_into_view_if_needed()
        element.screenshot(path=SCREENSHOTS / f"{name}.png")

    def screenshot_first_picture(self, mime: str, prefix: str) -> None:
        """Save the first picture of this kind as build/screenshots/<prefix>-first-<graph|plot>.png."""
        area, kind = PICTURES[mime]
        self._screenshot_first(area, f"{prefix}-first-{kind}")

    def validate(self) -> str:
        """Press nbgrader's Validate button; the text of the dialog with its results."""
        self.page.locator(".validate-button").click()
        dialog = self.page.locator(".jp-Dialog", has_text="Validation Results")
        dialog.wait_for(timeout=300_000)
        return dialog.inner_text()

    def validation_error(self) -> str:
        """The error Validate's open dialog shows for the last cell that failed, as the page lays it out."""
        return self.page.locator(".jp-Dialog .validation-failed pre").last.inner_text()

    def lines_cut_in_validation(self, lines: list[str]) -> list[str]:
        """Those of `lines` that Validate's open dialog does not show whole on one line: wrapped, or past
        the right edge of what its error box or the dialog leaves visible (the rest scrolls out of sight)."""
        return self.page.locator(".jp-Dialog .validation-failed pre").last.evaluate(_LINES_CUT, lines)


# Each line found in the box's text, then laid out by a Range over the text nodes that hold it.
_LINES_CUT = """(box, lines) => {
    const nodes = [];
    let text = "";
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        nodes.push([node, text.length]);
        text += node.data;
    }
    const at = offset => {
        const [node, start] = nodes.findLast(([, start]) => start <= offset);
        return [node, offset - start];
    };
    const shown = box.getBoundingClientRect();
    const dialog = box.closest(".jp-Dialog-content").getBoundingClientRect();
    const right = Math.min(shown.left + box.clientLeft + box.clientWidth, dialog.right);
    let from = 0;
    return lines.filter(line => {
        const start = text.indexOf(line, from);
        if (start < 0) return true;
        from = start + line.length;
        const range = document.createRange();
        range.setStart(...at(start));
        range.setEnd(...at(start + line.length));
        const rects = [...range.getClientRects()].filter(rect => rect.width > 0);
        const rows = new Set(rects.map(rect => Math.round(rect.top)));
        return rows.size !== 1 || Math.max(...rects.map(rect => rect.right)) > right + 0.5;
    });
}"""


@contextmanager
def notebook_page(browser: Browser, lab: JupyterLab, path: str, name: str) -> Iterator[Notebook]:
    """`path` open in a new page; the page as it last looked is saved as build/screenshots/<name>.png,
    whether the test passed or not."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        yield Notebook(page, lab, path)
    finally:
        page.screenshot(path=SCREENSHOTS / f"{name}.png")
        page.close()
