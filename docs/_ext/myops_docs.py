"""The myops docs' Sphinx extension.

- ``{myops-op} NAME``: an op's entry in the op reference starts with every schema registered
  for ``torch.ops.myops.NAME`` (read from the library at build time, so it cannot drift);
- ``{repo}`path``` or ``{repo}`text <path>```: a link to a file of the repository, which must
  exist;
- every ``python`` code block of every page is run when the page is read, in order, one
  namespace per page, in a scratch directory; so are the ``>>>`` examples of the docstrings
  autodoc pulls in (torch and myops imported). A block whose first line starts with
  ``# not run`` is shown only (it says why: a GPU, minutes of compilation). A failure is a
  warning, which ``make docs`` (-W) turns into an error;
- after reading, the rules of doccheck.py: every registered op has an entry, every public
  function is documented, every path a page names exists (a results file above all), and every
  table row with a measured number names its results file and commit.
"""

import contextlib
import doctest
import linecache
import os
import re
import tempfile
import time
import traceback
import warnings
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

import doccheck

logger = logging.getLogger(__name__)
NOT_RUN = doccheck.NOT_RUN
_stats = {"blocks": 0, "doctests": 0, "seconds": 0.0}
_ops_cache = {}


def _ops():
    if not _ops_cache:
        _ops_cache.update(doccheck.registered_ops())
    return _ops_cache


class OpDirective(SphinxDirective):
    """The schemas of one op (every overload), as the library registers them."""

    required_arguments = 1

    def run(self):
        name = self.arguments[0]
        schemas = _ops().get(name)
        if not schemas:
            logger.warning(f"myops-op: torch.ops.myops.{name} is not registered", location=self.get_location())
            return []
        text = "\n".join(schemas)
        block = nodes.literal_block(text, text, language="none", classes=["myops-schema"])
        title = nodes.paragraph(classes=["myops-schema-title"])
        title += nodes.literal(text=f"torch.ops.myops.{name}")
        title += nodes.Text(" — schema" + ("s" if len(schemas) > 1 else "") + ":")
        return [title, block]


class FileRole(SphinxRole):
    """A link to a repository file or folder (relative to the built page, so it works where the
    site is read beside its checkout); a path that does not exist is a warning."""

    def run(self):
        # {repo}`path` or {repo}`text <path>`
        m = re.fullmatch(r"(.*?)\s*<([^<>]+)>", self.text.strip(), re.S)
        title, path = (m.group(1), m.group(2)) if m else (self.text.strip(), self.text.strip())
        if not (doccheck.ROOT / path).exists():
            logger.warning(f"{{repo}}: {path} does not exist in the repository", location=self.get_location())
        depth = self.env.docname.count("/")
        out = Path(self.env.app.outdir).resolve()
        up = os.path.relpath(doccheck.ROOT, out)
        uri = "/".join([".."] * depth + [up, path]) if up != "." else path
        ref = nodes.reference(title, "", refuri=uri, classes=["myops-file"])
        ref += nodes.literal(text=title)
        return [ref], []


def _run_examples(app, doctree):
    """Run the page's python blocks and docstring examples, in order, in one namespace."""
    import torch

    docname = app.env.docname
    ns = {"__name__": f"docs.{docname.replace('/', '.')}"}
    t0 = time.perf_counter()
    here = os.getcwd()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as quiet:
        os.chdir(tmp)  # contextlib.chdir needs Python 3.11
        try:
            for node in doctree.findall(lambda n: isinstance(n, (nodes.literal_block, nodes.doctest_block))):
                code = node.astext()
                if isinstance(node, nodes.doctest_block):
                    _run_doctest(code, node, docname)
                elif node.get("language") == "python" and not code.lstrip().startswith(NOT_RUN):
                    _stats["blocks"] += 1
                    name = f"<docs/{docname}.md: example at line {node.line}>"
                    # the source is known by name: inspect (torch.jit.script) can read it
                    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
                    try:
                        with contextlib.redirect_stdout(quiet), warnings.catch_warnings():
                            warnings.simplefilter("ignore", FutureWarning)  # torch.jit's deprecation
                            exec(compile(code, name, "exec"), ns)
                    except Exception:
                        logger.warning(f"example failed:\n{code}\n{traceback.format_exc(limit=-3)}", location=node)
        finally:
            os.chdir(here)
    _stats["seconds"] += time.perf_counter() - t0


def _run_doctest(code, node, docname):
    import torch

    import myops

    _stats["doctests"] += 1
    test = doctest.DocTestParser().get_doctest(code, {"torch": torch, "myops": myops}, docname, docname, 0)
    out = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=out.append)
    if runner.failures:
        logger.warning("docstring example failed:\n" + "".join(out), location=node)


def _check_coverage(app, env):
    missing = sorted(set(_ops()) - doccheck.documented_ops())
    if missing:
        logger.warning(
            "op reference: no entry ({myops-op} NAME in docs/ops/) for "
            + ", ".join(f"torch.ops.myops.{m}" for m in missing)
        )
    undocumented = sorted(doccheck.public_api() - doccheck.documented_api())
    if undocumented:
        logger.warning("op reference: no autodoc entry for " + ", ".join(undocumented))
    for page, paths in doccheck.missing_paths(doccheck.doc_files()).items():
        logger.warning(f"{page} names paths that do not exist: {', '.join(paths)}")
    for page, rows in doccheck.unsourced_numbers(doccheck.doc_files()).items():
        logger.warning(f"{page}: table rows whose numbers name no results file and commit: " + "; ".join(rows))


def _summary(app, exc):
    if exc is None:
        logger.info(
            f"myops docs: ran {_stats['blocks']} example blocks and {_stats['doctests']} "
            f"docstring examples in {_stats['seconds']:.1f} s"
        )


def setup(app):
    app.add_directive("myops-op", OpDirective)
    app.add_role("repo", FileRole())
    app.connect("doctree-read", _run_examples)
    app.connect("env-check-consistency", _check_coverage)
    app.connect("build-finished", _summary)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
