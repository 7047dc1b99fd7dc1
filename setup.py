"""Build of the optional compiled kernels (app/formats/_kernel.c, app/formats/_terse.c); everything else is in
pyproject.toml.

The extension is optional: where no C compiler is available the install still succeeds and the reader uses its
pure-numpy path, which gives the same results (tests/formats/test_kernel.py compares the two); likewise the
TERSE loops fall back to app/formats/terse_codec.py (tests/formats/test_terse.py compares the bytes).
"""

import sys

from setuptools import Extension, setup

args = [] if sys.platform == "win32" else ["-O3"]
setup(ext_modules=[Extension("app.formats._kernel", ["app/formats/_kernel.c"], optional=True,
                             extra_compile_args=args),
                   Extension("app.formats._terse", ["app/formats/_terse.c"], optional=True,
                             extra_compile_args=args)])
