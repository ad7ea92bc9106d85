# Sphinx configuration of the myops docs. Build: `make docs` (warnings are errors), output in
# build/docs/html. The pages are Markdown (MyST); docs/_ext/myops_docs.py adds the op reference's
# schemas, the {file} role and the run of every example.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

import myops  # noqa: E402  (the op reference reads the registered ops)

project = "myops"
author = "the myops authors"
copyright = "the myops authors"
release = myops.__version__
version = release.split("+")[0]

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myops_docs",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
add_module_names = True
python_display_short_literal_types = True

html_theme = "alabaster"
html_title = f"myops {version}"
html_static_path = ["_static"]
html_css_files = ["myops.css"]
html_theme_options = {
    "description": "Fast, bit-exact PyTorch operators",
    "page_width": "1180px",
    "sidebar_width": "240px",
    "fixed_sidebar": True,
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
html_show_sourcelink = False
