"""The C++ and CUDA sources' layout, clang-format's with the repository's `.clang-format`: the
one list of the files it covers, for `make format` (which rewrites them) and the suite's check
(`--check`, tests/test_package.py; CI). clang-format is the pinned wheel of requirements-dev.txt
(each release lays out some lines differently).

    python tools/cpp_format.py            # rewrite every file in place
    python tools/cpp_format.py --check    # list the files whose layout differs; exit 1 if any
"""

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the tracked C++ / CUDA files it lays out: the package's sources, the C++ examples and the
#: CUDA emulation's units (tables aligned by hand sit between `clang-format off` and `on`)
PATHSPECS = [f"{d}/*.{ext}" for d in ("csrc", "examples", "tests") for ext in ("h", "cpp", "cu", "cuh")]


def files():
    out = subprocess.run(["git", "ls-files", "--", *PATHSPECS], cwd=ROOT, capture_output=True, text=True, check=True)
    return [os.path.join(ROOT, f) for f in out.stdout.split()]


def executable():
    import clang_format  # the wheel (requirements-dev.txt)

    return clang_format.get_executable("clang-format")


def unformatted(exe, paths):
    """The paths whose layout clang-format would change."""
    bad = []
    for p in paths:
        with open(p, "rb") as f:
            before = f.read()
        after = subprocess.run([exe, "--style=file", p], cwd=ROOT, capture_output=True, check=True).stdout
        if after != before:
            bad.append(os.path.relpath(p, ROOT))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list the files to reformat; write nothing")
    args = ap.parse_args()
    exe, paths = executable(), files()
    if args.check:
        bad = unformatted(exe, paths)
        for p in bad:
            print(f"{p}: not in clang-format's layout (python tools/cpp_format.py mends it)")
        return 1 if bad else 0
    subprocess.run([exe, "--style=file", "-i", *paths], cwd=ROOT, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
