# Copyright 2026 The manipulator_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Sphinx's settings for the guides in this folder and the API beside them.

rosdoc2 (docs.ros.org) reads this folder through ``rosdoc2.yaml`` and wraps this file: it adds
autodoc, intersphinx, its theme and the Markdown parser, runs ``sphinx-apidoc -e`` over the
package into the same folder (``modules.rst``, one page a module), and mocks the dependencies
it cannot import.  ``test/package/test_rosdoc.py`` builds the same way and fails on every
warning but those it names with their reasons.
"""

import os
import sys


def _package_root():
    """
    Return the folder holding the package's sources, for autodoc to import them.

    Built from docs/ (``sphinx-build docs out``), the folder above this one.  rosdoc2 0.2
    executes this file from a folder of its own and puts nothing on ``sys.path`` (later versions
    do, ros-infrastructure/rosdoc2#155): there, the ``--package-path`` it was given.
    """
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
    if os.path.isfile(os.path.join(here, 'manipulator_dynamics', '__init__.py')):
        return here
    for flag, value in zip(sys.argv, sys.argv[1:]):
        if flag in ('--package-path', '-p'):
            return os.path.abspath(value)
    return here


sys.path.insert(0, _package_root())

project = 'manipulator_dynamics'
author = 'The manipulator_dynamics Authors'
copyright = '2026, The manipulator_dynamics Authors. Apache-2.0'  # noqa: A001 (Sphinx's name)

extensions = ['myst_parser', 'sphinx.ext.autodoc', 'sphinx.ext.napoleon']
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
master_doc = 'index'
exclude_patterns = ['_build', '__readme_include.rst']     # see _list_rosdoc2_pages

# the docstrings are numpy-style: ``Parameters`` and ``Returns`` as field lists
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# a type such as ``(n,) array`` stays text: as a ``:type:`` field each of its words would be a
# cross-reference, and ``n`` names several attributes
napoleon_use_param = False
napoleon_use_rtype = False
# a class's ``Attributes`` section as fields of its own page: as attribute entries they would
# stand beside the ones autodoc writes for the same fields (a dataclass's)
napoleon_use_ivar = True
# each name on one page, its module's: a package's ``__init__`` lists in ``__all__`` the names
# it re-exports, which autodoc would otherwise document a second time there
autodoc_default_options = {'ignore-module-all': True}
autodoc_member_order = 'bysource'
# the guides link to sections by their titles (``speed.md#memory``)
myst_heading_anchors = 3


def _list_rosdoc2_pages(app, docname, source):
    """
    Add to the index the page of standard documents that rosdoc2 writes beside the guides.

    rosdoc2 writes ``standards.rst`` (README, CHANGELOG, LICENSE, package.xml) into the folder
    it builds; a build of docs/ alone has none.  Its ``__readme_include.rst``, written for the
    index rosdoc2 makes when a package has none, is left out: the README is among the standard
    documents.
    """
    if docname == 'index' and os.path.isfile(os.path.join(app.srcdir, 'standards.rst')):
        source[0] += '\n.. toctree::\n   :maxdepth: 1\n\n   Standard Documents <standards>\n'


def setup(app):
    app.connect('source-read', _list_rosdoc2_pages)
