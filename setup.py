"""The optional compiled scan (haystack_irmetrics/core/_rank.c); metadata lives in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds and the package runs its
pure-Python path, which computes the same values.
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
