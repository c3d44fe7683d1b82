"""The confinement on Debian 12's own kernel (Linux 6.1, Landlock ABI 2, cgroup v2 alone, as on Debian 12
and Ubuntu 22.04 and 24.04), booted under QEMU (`debian_vm`): every attack of test_confine, run by a
grader as root in a systemd service's group, and by an unprivileged grader in a group delegated to it as
systemd's Delegate=yes does. Both first move their group's processes into a leaf of their own and enable
memory and pids for the notebooks' groups beside it, which this machine's cgroup v1 never asks of them.

One boot runs both (about 90 s of this machine's cores, emulated).
"""

import re
import site
import sys

import pytest
from debian_vm import REPO, boot
from test_confine_unprivileged import USER

pytestmark = pytest.mark.xdist_group("debian_12")
# test_confine_unprivileged's attacks at ABI 1, with the memory cap a delegated cgroup v2 group holds.
ATTACKS = "abi1 or capped or close_leaves"
SERVICE = "/sys/fs/cgroup/system.slice/grader.service"
DELEGATED = "/sys/fs/cgroup/system.slice/grader-as-user.service"
# What systemd's Delegate=yes hands the user: the group, and the files that move processes and enable
# controllers in it.
DELEGATED_FILES = " ".join(
    f"{DELEGATED}{name}" for name in ("", "/cgroup.procs", "/cgroup.subtree_control", "/cgroup.threads")
)
SCRIPT = f"""
set -u
cd {REPO}
C=/sys/fs/cgroup
echo "+memory +pids" > $C/cgroup.subtree_control
mkdir $C/system.slice {SERVICE} {DELEGATED}
echo "+memory +pids" > $C/system.slice/cgroup.subtree_control
uname -r > /mnt/kernel.txt

# As root, in a service's group beside another process of the service.
echo $$ > {SERVICE}/cgroup.procs
sleep 100000 &
{sys.executable} -m autograder doctor > /mnt/doctor.txt 2>&1
{sys.executable} -m pytest -p no:cacheprovider -q tests/test_confine.py > /mnt/as-root.txt 2>&1
echo $? > /mnt/as-root.status
cat {SERVICE}/cgroup.subtree_control > /mnt/service-children.txt
ls {SERVICE} | grep gradgrad- > /mnt/service-groups.txt
cat {SERVICE}/cgroup.procs | wc -w > /mnt/service-processes.txt

# As an unprivileged user, in a group delegated to it, at the oldest Landlock ABI.
useradd --create-home --shell /usr/sbin/nologin {USER}
chown {USER}: {DELEGATED_FILES}
echo $$ > {DELEGATED}/cgroup.procs
cd /home/{USER}
setpriv --reuid={USER} --regid={USER} --clear-groups env -i PATH=/usr/bin:/bin HOME=/home/{USER} \\
    PYTHONPATH={":".join([*site.getsitepackages(), str(REPO)])} PYTHONDONTWRITEBYTECODE=1 \\
    /usr/bin/python3 -m pytest -p no:cacheprovider -q -k "{ATTACKS}" {REPO}/tests/test_confine.py \\
    > /mnt/as-user.txt 2>&1
echo $? > /mnt/as-user.status
ls {DELEGATED} | grep gradgrad- > /mnt/delegated-groups.txt
"""


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    """The files the script left in the guest's /mnt, after one boot."""
    status, output, share = boot(SCRIPT, tmp_path_factory.mktemp("debian-12"))
    assert status == 0, output
    return share


def _passed(report: str) -> None:
    summary = report.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed(, \d+ deselected)? in [\d.]+s( \(.*\))?", summary), report[-4000:]


def test_the_guest_is_debian_12s_kernel_with_cgroup_v2_alone(guest):
    assert (guest / "kernel.txt").read_text().startswith("6.1.")
    doctor = (guest / "doctor.txt").read_text()
    assert "Landlock ABI: 2 used, the kernel's is 2" in doctor
    assert f"cgroup: v2 under {SERVICE}, once the grader's group's processes are in its child" in doctor
    assert doctor.rstrip().endswith("python -m autograder grade can grade"), doctor


def test_a_root_grader_in_a_service_confines_every_attack_under_cgroup_v2(guest):
    _passed((guest / "as-root.txt").read_text())
    assert (guest / "as-root.status").read_text().strip() == "0"
    # Its processes and the service's other one went into its leaf; the notebooks' groups, gone now,
    # were made beside it with memory and pids.
    assert (guest / "service-children.txt").read_text().split() == ["memory", "pids"]
    (leaf,) = (guest / "service-groups.txt").read_text().split()
    assert re.fullmatch(r"gradgrad-grader-\d+", leaf)
    assert (guest / "service-processes.txt").read_text().strip() == "0"


def test_an_unprivileged_grader_confines_every_attack_in_a_delegated_cgroup_v2_group(guest):
    _passed((guest / "as-user.txt").read_text())
    assert (guest / "as-user.status").read_text().strip() == "0"
    (leaf,) = (guest / "delegated-groups.txt").read_text().split()
    assert re.fullmatch(r"gradgrad-grader-\d+", leaf)
