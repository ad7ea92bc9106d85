"""tools/check_spills.py (issue #25): a ptxas spill or local-memory warning fails the build unless
docs/design.md lists the kernel with its reason."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "check_spills.py")
SPILL = (
    "ptxas warning : Registers are spilled to local memory in function "
    "'_ZN5myops11elementwise6kernelEv', 8 bytes spill stores, 8 bytes spill loads\n"
)
LMEM = "ptxas warning : Local memory used for function '_ZN5myops8diagonal4copyEv', size of stack frame: 16 bytes\n"


def run(tmp_path, log, readme_list):
    (tmp_path / "build.log").write_text("nvcc -c x.cu\n" + log)
    (tmp_path / "README.md").write_text("# x\n\n### Register spills and local memory\n\n" + readme_list + "\n## next\n")
    return subprocess.run(
        [sys.executable, TOOL, str(tmp_path / "build.log"), str(tmp_path / "README.md")], capture_output=True, text=True
    )


def test_clean_log_passes(tmp_path):
    p = run(tmp_path, "", "")
    assert p.returncode == 0 and "0 ptxas spill" in p.stdout


def test_unlisted_spill_fails(tmp_path):
    p = run(tmp_path, SPILL + LMEM, "- `myops::diagonal::copy`: a per-thread array indexed at run time\n")
    assert p.returncode == 1, p.stdout
    assert "NOT ALLOWED: Registers are spilled" in p.stdout and "allowed: Local memory" in p.stdout


def test_listed_spills_pass(tmp_path):
    p = run(tmp_path, SPILL + LMEM, "- `myops::diagonal::copy`: reason\n- `myops::elementwise::kernel`: reason\n")
    assert p.returncode == 0, p.stdout


def test_missing_list_is_an_error(tmp_path):
    (tmp_path / "build.log").write_text("nvcc -c x.cu\n" + SPILL)
    (tmp_path / "design.md").write_text("# x\n\nno list here\n")
    p = subprocess.run(
        [sys.executable, TOOL, str(tmp_path / "build.log"), str(tmp_path / "design.md")], capture_output=True, text=True
    )
    assert p.returncode != 0 and "no '### Register spills and local memory' section" in p.stderr, p.stdout + p.stderr


def test_the_committed_list_is_found():
    """The default list (docs/design.md) exists and holds at least the one allowed spill."""
    p = subprocess.run([sys.executable, TOOL, os.devnull], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and "0 ptxas spill" in p.stdout, p.stdout + p.stderr
