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
