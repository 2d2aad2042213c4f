"""Only the C extension lives here; everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tabletop.engine._rearrange",
            sources=["engine/_rearrange.c"],
            extra_compile_args=["-O2", "-std=c11"],
        )
    ]
)
