"""Say how this host would confine student code when grading, and what it lacks with the fix for each;
grade nothing. Exit status 0 when `grade` can confine student code here, 1 when it would refuse."""

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command takes no option: it reads the host, and AUTOGRADER_LANDLOCK_ABI as `grade` does."""


def run(args: argparse.Namespace) -> int:
    from autograder.sandbox import host, landlock

    try:
        confinement = host.confinement()
    except ValueError as error:  # the Landlock cap is not a version
        print(error, file=sys.stderr)
        return 2
    used, kernel = confinement["landlock_abi"], confinement["kernel_landlock_abi"]
    capped = (
        f", capped by {landlock.CAP_VARIABLE}={os.environ[landlock.CAP_VARIABLE]}" if used < kernel else ""
    )
    print(f"Linux {os.uname().release}")
    print(f"Landlock ABI: {used} used, the kernel's is {kernel}{capped}")
    for version, stand_in in host.STAND_INS.items():
        if 0 < used < version:
            print(f"  ABI {version}'s {stand_in}")
    print(f"namespaces: {', '.join(confinement['namespaces']) or 'none'}")
    print(f"uid of a notebook: {confinement['uid']}")
    print(f"cgroup: {confinement['cgroup']}")
    print(f"read-only mounts: {'yes' if confinement['read_only_mounts'] else 'no'}")
    missing = confinement["missing"]
    if not missing:
        print("student code is confined here: python -m autograder grade can grade")
        return 0
    print("missing, so python -m autograder grade refuses (unless --trust-submissions):")
    for sentence in missing:
        print(f"- {sentence}")
    return 1
