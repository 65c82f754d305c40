"""The optional compiled scan (haystack_irmetrics/core/_rank.c); metadata lives in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds and the package runs its
pure-Python path, which computes the same values. The package does not import it on a free-threaded
build (it needs the GIL; see haystack_irmetrics.core.native.wanted). _rank.c stops with #error
before CPython 3.10.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "haystack_irmetrics.core._rank",
            ["haystack_irmetrics/core/_rank.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
