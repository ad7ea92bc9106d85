"""The GPU session's build archive: myops built ahead for the GPU machine's stack, and the check
that it fits the stack the session finds there.

    python gpu/gpu_build.py fingerprint             # this interpreter's stack, as JSON
    python gpu/gpu_build.py pack BUILD_LIB OUT_DIR  # archive a built package (make gpu-prebuilt)
    python gpu/gpu_build.py show [DIR]              # the manifest of DIR's archive
    python gpu/gpu_build.py check [DIR] [--install PKG_ROOT]

The archive is `myops-gpu.tar.xz` (split into `myops-gpu.tar.xz.partNN` files when over 15 MiB:
the device tool brings back files of at most 16 MiB) holding `manifest.json` and the built files
of the package (`myops/_C*.so`, `myops/lib/`, `myops/include/`, `myops/share/`,
`myops/_build_config.py`); the package's Python files come from the checkout. The manifest
records the stack the build is for (FIELDS: Python, torch's version, CUDA and git commit, the
processor; also the GPU architectures) and a hash of the sources the build compiles
(`source_hash`).

`check` compares the manifest with the interpreter that runs it and with the checkout: every
field of FIELDS must be equal, the device's compute capability must be among the archive's
architectures (when a GPU is visible), and the sources must hash the same. It prints one JSON
line ({"verdict": "match" | "mismatch" | "missing", "reasons": [...], ...}) and exits 0, 1 or 2;
with --install, a match also puts the archive's files into PKG_ROOT/myops/.
"""

import argparse
import datetime
import glob
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "myops-gpu.tar.xz"
PART_BYTES = 15 << 20
# what must be equal between the archive and the interpreter that loads it
FIELDS = ("python", "torch", "torch_cuda", "torch_git", "machine")
# what the compiled build depends on (the package's .py files are read from the checkout)
SOURCES = ("csrc", "cmake", "setup.py", "pyproject.toml")
# the built files of the package, relative to its folder
BUILT = ("_C*.so", "lib", "include", "share", "_build_config.py")


def fingerprint():
    """The stack of this interpreter: Python, torch (version, CUDA, git commit), and the GPU's
    compute capability when one is visible."""
    import torch

    fp = {
        "python": "%d.%d" % sys.version_info[:2],
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "torch_git": getattr(torch.version, "git_version", None),
        "machine": platform.machine(),
    }
    try:
        from importlib.metadata import version

        fp["torch_dist"] = version("torch")  # the wheel's own version (PyPI's: 2.11.0, no local tag)
    except Exception:  # noqa: BLE001 - informative only
        fp["torch_dist"] = None
    fp["capability"] = ("%d.%d" % torch.cuda.get_device_capability()) if torch.cuda.is_available() else None
    return fp


def source_hash(root=ROOT):
    """sha256 over the path and content of every source file the build compiles (build outputs
    and caches that may lie beside them are left out: they do not travel to the device)."""
    h = hashlib.sha256()
    files = []
    for top in SOURCES:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            files.append(top)
        for d, dirs, names in os.walk(path):
            dirs[:] = [x for x in dirs if x != "__pycache__"]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names if not n.endswith((".o", ".so", ".pyc"))]
    for rel in sorted(files):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def archive_files(folder):
    """The archive's file(s) in `folder`, in order: the whole file, or its parts."""
    whole = os.path.join(folder, NAME)
    if os.path.exists(whole):
        return [whole]
    return sorted(glob.glob(whole + ".part*"))


def read_archive(folder):
    files = archive_files(folder)
    if not files:
        return None
    data = b"".join(open(p, "rb").read() for p in files)
    return tarfile.open(fileobj=io.BytesIO(data), mode="r:xz")


def manifest_of(folder):
    tar = read_archive(folder)
    if tar is None:
        return None
    with tar:
        return json.load(tar.extractfile("manifest.json"))


def pack(build_lib, out_dir, note="", allow_cpu=False, override=None):
    """Archive the package built into build_lib/myops/ (setup.py build_ext --build-lib) with its
    manifest; returns (the paths written, the manifest). `allow_cpu` (the session's dry run)
    accepts a build without CUDA kernels; `override` replaces manifest fields (its tests)."""
    pkg = os.path.join(build_lib, "myops")
    members = sorted({p for pat in BUILT for p in glob.glob(os.path.join(pkg, pat))})
    if not any(os.path.basename(p).startswith("_C") for p in members) or not os.path.isdir(os.path.join(pkg, "lib")):
        raise SystemExit(f"gpu_build: no built package in {pkg} (_C*.so and lib/ expected)")
    config = {}
    exec(open(os.path.join(pkg, "_build_config.py")).read(), config)  # noqa: S102 - our own file
    built = config["BUILD_CONFIG"]
    if not built.get("with_cuda") and not allow_cpu:
        raise SystemExit("gpu_build: the build in %s has no CUDA kernels (%s)" % (pkg, built.get("why_no_cuda")))
    manifest = dict(
        fingerprint(),
        source_hash=source_hash(),
        cuda_archs=built.get("cuda_archs"),
        myops=built.get("version"),
        commit=_git_commit(),
        note=note,
        built=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )
    manifest.pop("capability", None)  # the build machine's GPU, if any, is not the target
    manifest.update(override or {})
    buf = io.BytesIO()
    # preset 0: about as fast as gzip and smaller (the session on the device packs its build too)
    with tarfile.open(fileobj=buf, mode="w:xz", preset=0) as tar:
        blob = json.dumps(manifest, indent=1).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
        for p in members:
            tar.add(p, arcname=os.path.relpath(p, build_lib))
    data = buf.getvalue()
    os.makedirs(out_dir, exist_ok=True)
    for old in archive_files(out_dir):
        os.remove(old)
    if len(data) <= PART_BYTES:
        paths = [os.path.join(out_dir, NAME)]
        chunks = [data]
    else:
        chunks = [data[i : i + PART_BYTES] for i in range(0, len(data), PART_BYTES)]
        paths = [os.path.join(out_dir, f"{NAME}.part{k:02d}") for k in range(len(chunks))]
    for p, c in zip(paths, chunks):
        with open(p, "wb") as f:
            f.write(c)
    return paths, manifest


def _git_commit():
    try:
        return subprocess.check_output(
            # -dirty: the sources differ from that commit (the device's copy of the checkout can
            # carry an older .git than its files: the first H200 call named the previous commit)
            ["git", "describe", "--always", "--dirty", "--abbrev=7"],
            cwd=ROOT,
            text=True,
            stderr=subprocess.DEVNULL,
        ).strip()
    except Exception:  # noqa: BLE001
        return "unknown"


def compare(manifest, fp, src_hash):
    """The reasons the archive does not fit (empty: it fits)."""
    reasons = [f"{k}: archive {manifest.get(k)!r}, here {fp.get(k)!r}" for k in FIELDS if manifest.get(k) != fp.get(k)]
    archs = [a.replace("+PTX", "") for a in (manifest.get("cuda_archs") or "").replace(",", ";").split(";") if a]
    if fp.get("capability") and fp["capability"] not in archs:
        reasons.append(f"GPU: compute capability {fp['capability']}, archive built for {archs or 'none'}")
    if manifest.get("source_hash") != src_hash:
        reasons.append(
            f"sources: archive built from {manifest.get('source_hash')} "
            f"(commit {manifest.get('commit')}), checkout is {src_hash}"
        )
    return reasons


def check(folder, install=None, fp=None):
    """(verdict, reasons, manifest); with `install`, a matching archive's files go to install/."""
    tar = read_archive(folder)
    if tar is None:
        return "missing", [f"no {NAME} in {folder}"], None
    with tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        reasons = compare(manifest, fp or fingerprint(), source_hash())
        if reasons:
            return "mismatch", reasons, manifest
        if install:
            members = [m for m in tar.getmembers() if m.name.startswith("myops/")]
            with tempfile.TemporaryDirectory() as tmp:
                safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.11.4
                tar.extractall(tmp, members=members, **safe)
                for p in glob.glob(os.path.join(tmp, "myops", "*")):
                    dest = os.path.join(install, "myops", os.path.basename(p))
                    if os.path.isdir(dest):
                        subprocess.run(["rm", "-rf", dest], check=True)
                    subprocess.run(["cp", "-a", p, dest], check=True)
    return "match", [], manifest


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fingerprint")
    a = sub.add_parser("pack")
    a.add_argument("build_lib")
    a.add_argument("out_dir")
    a.add_argument("--note", default="")
    a.add_argument("--allow-cpu", action="store_true", help="accept a build without CUDA kernels (dry run)")
    s = sub.add_parser("show")
    s.add_argument("dir", nargs="?", default=os.path.join(ROOT, "gpu-build"))
    c = sub.add_parser("check")
    c.add_argument("dir", nargs="?", default=os.path.join(ROOT, "gpu-build"))
    c.add_argument("--install", default=None, metavar="PKG_ROOT", help="on a match, install into PKG_ROOT/myops/")
    args = p.parse_args(argv)
    if args.cmd == "fingerprint":
        print(json.dumps(fingerprint()))
        return 0
    if args.cmd == "pack":
        paths, manifest = pack(args.build_lib, args.out_dir, args.note, args.allow_cpu)
        print(json.dumps(manifest, indent=1))
        for path in paths:
            print(f"wrote {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")
        return 0
    if args.cmd == "show":
        m = manifest_of(args.dir)
        print(json.dumps(m, indent=1) if m else f"no {NAME} in {args.dir}")
        return 0 if m else 2
    verdict, reasons, manifest = check(args.dir, args.install)
    print(json.dumps({"verdict": verdict, "reasons": reasons, "archive": manifest}))
    return {"match": 0, "mismatch": 1, "missing": 2}[verdict]


if __name__ == "__main__":
    sys.exit(main())
