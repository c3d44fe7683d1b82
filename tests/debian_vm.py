"""Debian 12's own kernel (Linux 6.1: Landlock ABI 2, cgroup v2 alone), booted under QEMU to run a shell
script as its root, over this machine's files.

The machine's root is shared read-only (9p) beneath a throwaway overlay, so the script sees this
checkout, its venv and the system's programs at their usual paths and may change anything (add a user,
make cgroups) without touching the machine. The guest mounts cgroup v2 alone, as Debian 12 and the Ubuntu
LTS releases do. QEMU emulates the CPU in software (TCG): no /dev/kvm is needed, at the price of Python
running some twenty times slower. `make test` downloads the kernel's package (`DEBIAN_12_KERNEL`).
"""

import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNEL_PACKAGE = REPO / "build" / "debian-12-kernel.deb"
# What the guest loads before it can mount the shared root: virtio's PCI transport, 9p over it, and
# overlayfs, each a module in Debian's kernel. Loaded in passes, since their order is their dependencies'.
MODULES = (
    "virtio", "virtio_ring", "virtio_pci_legacy_dev", "virtio_pci_modern_dev", "virtio_pci",
    "netfs", "fscache", "9pnet", "9pnet_virtio", "9p", "overlay",
)  # fmt: skip
# PID 1 of the guest: mount the shared root under a tmpfs overlay, give it what a booted system has
# (proc, sys, devices, cgroup v2; /tmp stays the overlay's, which may hold the checkout), make it the
# root (a chroot would refuse user namespaces), run the script there, and record how it exited.
INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for pass in 1 2 3 4; do for m in /modules/*.ko; do insmod "$m" 2>/dev/null && rm "$m"; done; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 machine /lower
mount -t tmpfs changes /changes; mkdir /changes/upper /changes/work
mount -t overlay -o lowerdir=/lower,upperdir=/changes/upper,workdir=/changes/work overlay /root
mount -t 9p -o trans=virtio,version=9p2000.L share /root/mnt
mount -t proc proc /root/proc; mount -t sysfs sys /root/sys; mount -t devtmpfs dev /root/dev
mount -t cgroup2 cgroup2 /root/sys/fs/cgroup
mount -t tmpfs shm /root/dev/shm
exec switch_root /root /bin/sh -c \
    'sh /mnt/script.sh > /mnt/output.txt 2>&1; echo $? > /mnt/status; /bin/busybox poweroff -f'
"""


def boot(script: str, folder: Path, timeout: float = 1200) -> tuple[int, str, Path]:
    """Run `script` (sh) as root in the guest; return its exit status, what it printed, and the folder
    it sees as /mnt (to leave files in). `folder` holds the kernel, the initramfs and that share."""
    kernel = _unpack_kernel(folder / "kernel")
    initramfs = _initramfs(folder / "initramfs", kernel)
    share = folder / "share"
    share.mkdir()
    (share / "script.sh").write_text(script)
    qemu = [
        "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-smp", "2", "-m", "4096",
        "-nographic", "-no-reboot", "-kernel", str(next(kernel.glob("boot/vmlinuz-*"))),
        "-initrd", str(initramfs), "-append", "console=ttyS0 quiet panic=-1",
        "-fsdev", "local,id=machine,path=/,security_model=passthrough,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=machine,mount_tag=machine",
        "-fsdev", f"local,id=share,path={share},security_model=passthrough",
        "-device", "virtio-9p-pci,fsdev=share,mount_tag=share",
    ]  # fmt: skip
    console = folder / "console.txt"
    with console.open("w") as log:
        subprocess.run(
            qemu, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=True
        )
    status = share / "status"
    assert status.exists(), f"the guest did not run the script; its console:\n{console.read_text()[-3000:]}"
    return int(status.read_text()), (share / "output.txt").read_text(), share


def _unpack_kernel(folder: Path) -> Path:
    """The kernel and the modules the guest loads, out of Debian's package."""
    assert KERNEL_PACKAGE.exists(), f"{KERNEL_PACKAGE} is missing: `make test` downloads it"
    folder.mkdir()
    wanted = ["./boot/vmlinuz-*", *(f"./lib/modules/*/{m}.ko" for m in MODULES)]
    unpack = f"dpkg-deb --fsys-tarfile {shlex.quote(str(KERNEL_PACKAGE))} | tar -x --wildcards " + " ".join(
        shlex.quote(pattern) for pattern in wanted
    )
    subprocess.run(["sh", "-c", unpack], cwd=folder, check=True)
    return folder


def _initramfs(folder: Path, kernel: Path) -> Path:
    """A gzipped cpio of busybox, the modules and `INIT`."""
    for name in ("bin", "modules", "proc", "sys", "dev", "lower", "changes", "root"):
        (folder / name).mkdir(parents=True)
    (folder / "bin" / "busybox").write_bytes(Path("/bin/busybox").read_bytes())
    (folder / "bin" / "busybox").chmod(0o755)
    for module in kernel.glob("lib/modules/*/**/*.ko"):
        (folder / "modules" / module.name).write_bytes(module.read_bytes())
    (folder / "init").write_text(INIT)
    (folder / "init").chmod(0o755)
    archive = folder.with_suffix(".cpio.gz")
    subprocess.run(
        ["sh", "-c", f"find . | busybox cpio -o -H newc | gzip -1 > {shlex.quote(str(archive))}"],
        cwd=folder,
        check=True,
        stderr=subprocess.DEVNULL,
    )
    return archive
