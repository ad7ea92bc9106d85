r"""Fails on a register spill or a use of local memory in a CUDA kernel that docs/design.md does not
list with its reason (issue #25: setup.py passes -Xptxas -warn-spills,-warn-lmem-usage to nvcc).

    python tools/check_spills.py build/build.log

Reads ptxas' warnings from a build log, demangles the kernels' names (c++filt, where present) and
compares them with docs/design.md's "Register spills and local memory" list: one line per allowed
kernel, `- \`<pattern>\`: <reason>`, the pattern a substring of the demangled name. Prints every
warning and exits 1 when one is not allowed. A log with no nvcc compile in it (a CPU build, a
build that reused every object) passes and says so.
"""

import re
import subprocess
import sys

WARNING = re.compile(
    r"ptxas warning : (Registers are spilled to local memory|Local memory (?:is )?used)"
    r" (?:in|for) function '([^']+)'(.*)"
)
SECTION = "### Register spills and local memory"


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return out.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def allowed(readme):
    with open(readme) as f:
        text = f.read()
    if SECTION not in text:  # a moved or renamed list must not allow nothing silently
        raise SystemExit(f"check_spills: no {SECTION!r} section in {readme}")
    body = text.split(SECTION, 1)[1].split("\n#", 1)[0]
    return re.findall(r"^- `([^`]+)`:", body, re.M)


def main(argv):
    log = argv[1] if len(argv) > 1 else "build/build.log"
    readme = argv[2] if len(argv) > 2 else "docs/design.md"
    with open(log, errors="replace") as f:
        text = f.read()
    hits = sorted({(m.group(1), m.group(2), m.group(3).strip()) for m in WARNING.finditer(text)})
    compiled = text.count("nvcc") > 0
    names = demangle([h[1] for h in hits])
    patterns = allowed(readme)
    bad = 0
    for (kind, _, detail), name in zip(hits, names):
        ok = any(p in name for p in patterns)
        bad += not ok
        print(f"{'allowed' if ok else 'NOT ALLOWED'}: {kind}: {name} {detail}")
    print(
        f"{len(hits)} ptxas spill / local-memory warnings, {bad} not listed in {readme} ({SECTION!r})"
        + ("" if compiled else "; no nvcc compile in this log")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
