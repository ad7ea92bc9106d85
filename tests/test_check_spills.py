"""tools/check_spills.py (issue #25): a ptxas spill or local-memory warning fails the build unless
the README lists the kernel with its reason."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "check_spills.py")
SPILL = ("ptxas warning : Registers are spilled to local memory in function "
         "'_ZN5myops11elementwise6kernelEv', 8 bytes spill stores, 8 bytes spill loads\n")
LMEM = "ptxas warning : Local memory used for function '_ZN5myops8diagonal4copyEv', size of stack frame: 16 bytes\n"


def run(tmp_path, log, readme_list):
    (tmp_path / "build.log").write_text("nvcc -c x.cu\n" + log)
    (tmp_path / "README.md").write_text("# x\n\n### Register spills and local memory\n\n" + readme_list + "\n## next\n")
    return subprocess.run([sys.executable, TOOL, str(tmp_path / "build.log"), str(tmp_path / "README.md")],
                          capture_output=True, text=True)


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

