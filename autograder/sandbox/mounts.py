"""A notebook's own view of the filesystem, made in its fresh mount namespace while it still holds the
capabilities to mount.

Every mount it inherits is made read-only first, at every Landlock level: a file of the instructor's
can then be neither truncated by path (which Landlock checks only from ABI 3), nor have its mode, owner,
times or extended attributes changed (which no Landlock version checks). That matters most for a
grader that is not root, whose notebooks hold its own uid. Only what is mounted afterwards is writable:
the size-capped scratch tmpfs, and a fresh /proc that shows the notebook's processes alone.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox import syscall
from autograder.sandbox.syscall import MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC

_EMPTY = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY


@dataclass(frozen=True)
class View:
    """What the notebook sees: `scratch` (its only writable folder, `scratch_bytes` large), `home` (the
    worker's, shown empty but for `kept`, the paths under it the notebook must read) and `hidden`
    (folders shown empty)."""

    scratch: str
    scratch_bytes: int
    home: Path
    kept: tuple[str, ...]
    hidden: tuple[str, ...]

    def make(self, uid: int, gid: int) -> None:
        """Mount the view for a notebook that will run as `uid`/`gid`."""
        syscall.mount("none", "/", None, MS_REC | MS_PRIVATE)
        syscall.make_read_only("/")
        if self.home != Path("/"):
            self._empty_home()
        for path in self.hidden:
            if os.path.isdir(path):
                syscall.mount("tmpfs", path, "tmpfs", _EMPTY, "size=4k")
        options = f"size={self.scratch_bytes},mode=700,uid={uid},gid={gid}"
        syscall.mount("tmpfs", self.scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options)
        syscall.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)

    def _empty_home(self) -> None:
        """An empty tmpfs over the worker's home, with what the notebook must read mounted back (read-only,
        as cloned from the read-only tree). A home that does not exist (`nobody`'s) has nothing to hide."""
        if not self.home.is_dir():
            return
        trees = [(path, os.path.isdir(path), syscall.clone_tree(path)) for path in self.kept]
        syscall.mount("tmpfs", str(self.home), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        for path, folder, tree in trees:
            if folder:
                os.makedirs(path)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                # An empty file to mount the kept one on.
                open(path, "x").close()
            syscall.attach_tree(tree, path)
            os.close(tree)
        syscall.make_read_only(str(self.home))
