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

"""The machine code compiled at install time reaches the user's cache (``_jit``)."""

from manipulator_dynamics import _jit


def test_prebuilt_kernels_join_a_cache_the_checkout_already_filled(tmp_path):
    """
    Add the installed copy's entries to a cache folder that a checkout made first.

    The checkout's entries stay; the installed copy's, filed under another source path, are
    added (they were skipped, and the first node after ``colcon build`` compiled for 20-60 s).
    """
    prebuilt = tmp_path / 'prebuilt'
    (prebuilt / 'install_path' / 'rigid').mkdir(parents=True)
    (prebuilt / 'install_path' / 'rigid' / 'rnea.rnea_kernel-1.py311.nbi').write_bytes(b'new')
    (prebuilt / 'shared.nbi').write_bytes(b'prebuilt')
    target = tmp_path / 'cache'
    (target / 'checkout_path').mkdir(parents=True)
    (target / 'checkout_path' / 'rnea.rnea_kernel-1.py311.nbi').write_bytes(b'checkout')
    (target / 'shared.nbi').write_bytes(b'already here')
    _jit._add_missing(str(prebuilt), str(target))
    assert (target / 'install_path' / 'rigid' / 'rnea.rnea_kernel-1.py311.nbi').read_bytes() \
        == b'new'
    assert (target / 'checkout_path' / 'rnea.rnea_kernel-1.py311.nbi').read_bytes() \
        == b'checkout'
    assert (target / 'shared.nbi').read_bytes() == b'already here'
    assert not list(target.rglob('*.tmp'))


def test_a_cache_that_cannot_be_written_is_left_to_numba(tmp_path):
    prebuilt = tmp_path / 'prebuilt'
    prebuilt.mkdir()
    (prebuilt / 'a.nbi').write_bytes(b'x')
    blocked = tmp_path / 'file'
    blocked.write_text('a file where the cache folder would be')
    _jit._add_missing(str(prebuilt), str(blocked / 'cache'))          # no error: numba compiles
    assert blocked.read_text().startswith('a file')


def _copy_of_the_package(tmp_path):
    import shutil
    copy = tmp_path / 'manipulator_dynamics'
    shutil.copytree(_jit._HERE, copy, ignore=shutil.ignore_patterns('__pycache__', '_prebuilt'))
    return copy


def test_the_cache_key_follows_every_module_that_can_hold_a_kernel_and_no_other(tmp_path):
    """
    An edited kernel module gives a new key; an edited node or demo keeps the compiled code.

    A key that missed a module would keep stale machine code; one that followed the nodes and
    the demos made every edit of them cost a minute of compiling on the next run.
    """
    copy = _copy_of_the_package(tmp_path)
    key = _jit._source_digest(str(copy))
    assert key == _jit._source_digest(str(copy))
    for folder in ('nodes', 'demo'):
        module = sorted((copy / folder).glob('*.py'))[-1]
        module.write_text(module.read_text() + '\n# edited\n')
        assert _jit._source_digest(str(copy)) == key, module
    for module in ('rigid/rnea.py', 'identification/base_parameters.py', 'flexible/newmark.py',
                   'model.py'):
        path = copy / module
        path.write_text(path.read_text() + '\n# edited\n')
        changed = _jit._source_digest(str(copy))
        assert changed != key, module
        key = changed


def test_the_folders_left_out_of_the_cache_key_compile_nothing():
    """No module of a folder the key leaves out imports numba or the package's ``_jit``."""
    import ast
    import pathlib
    left_out = [pathlib.Path(_jit._HERE, name) for name in _jit._NO_KERNELS]
    checked = 0
    for folder in left_out:
        for path in folder.rglob('*.py'):
            checked += 1
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ''] + [a.name for a in node.names]
                else:
                    continue
                assert not any(n.split('.')[0] == 'numba' or n.split('.')[-1] == '_jit'
                               for n in names), f'{path} imports {names}: a kernel outside the key'
    assert checked > 10
