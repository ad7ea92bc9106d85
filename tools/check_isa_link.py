#!/usr/bin/env python3
"""Checks that baseline code of a library runs no instruction of an ISA build.

setup.py compiles the *_avx2.cpp / *_avx512.cpp sources whole with -mavx2 / -mavx512* (its
ISA_BUILDS). An inline function that such an object shares with a baseline object (a torch
header's, or ours) is emitted by both as a weak symbol, and the linker keeps one copy. If it kept
the ISA object's, the baseline code calling it would run AVX instructions on a CPU without them
(SIGILL), whatever the runtime dispatch between the builds says. setup.py links the ISA objects
last so that the baseline copy wins; this check reads the result out of the library.

    check_isa_link.py LIB --isa OBJ... --baseline OBJ...

Exit 1, naming the functions, when a weak function defined by both an ISA object and a baseline
object holds AVX instructions (VEX / EVEX encodings or ymm / zmm registers) in LIB. setup.py runs
it after every link of libmyops.
"""

import argparse
import re
import subprocess
import sys

_AVX = re.compile(r"\tv[a-z0-9]+\s|%[yz]mm")


def weak_functions(obj):
    """The weak symbols `obj` defines (inline functions and template instances: COMDAT)."""
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True, check=True).stdout
    return {p[2] for p in (line.split() for line in out.splitlines()) if len(p) == 3 and p[1] == "W"}


def avx_functions(lib, among):
    """The functions of `among` whose code in `lib` holds an AVX instruction."""
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True, text=True, check=True
    ).stdout
    found, name = set(), None
    for line in dis.splitlines():
        if line.endswith(">:"):
            name = line[line.index("<") + 1 : -2]
            name = name if name in among else None
        elif name and name not in found and _AVX.search(line):
            found.add(name)
    return found


def isa_copies_kept(lib, isa_objects, baseline_objects):
    """Weak functions shared by the ISA and the baseline objects whose kept copy is an ISA one."""
    isa = set().union(*map(weak_functions, isa_objects)) if isa_objects else set()
    base = set().union(*map(weak_functions, baseline_objects)) if baseline_objects else set()
    return sorted(avx_functions(lib, isa & base))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lib")
    ap.add_argument("--isa", nargs="+", required=True)
    ap.add_argument("--baseline", nargs="+", required=True)
    a = ap.parse_args(argv)
    bad = isa_copies_kept(a.lib, a.isa, a.baseline)
    if bad:
        names = subprocess.run(["c++filt"], input="\n".join(bad), capture_output=True, text=True).stdout.splitlines()
        print(
            f"{a.lib}: baseline code calls an ISA build's copy of {len(bad)} shared function(s) (link the ISA "
            "objects after the baseline ones):",
            file=sys.stderr,
        )
        for n in names[:50]:
            print("  " + n, file=sys.stderr)
        return 1
    print(f"check_isa_link: {a.lib}: no shared function holds an ISA build's code", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
