"""Build the small C core (native/) as nexus_gateway._slb (SLB scan), ._kv (RoPE
re-rotation) and ._arena (block arena); metadata lives in pyproject.toml.

The extension is optional: if no C compiler is present the package still installs and the numpy
fallback, which gives identical answers, is used.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "nexus_gateway._slb",
            sources=["native/slb.c"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wno-unused-function"],
            optional=True,
        ),
        Extension(
            "nexus_gateway._kv",
            sources=["native/rope.c"],
            # No fused multiply-add: the kernel must round exactly like the numpy fallback.
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-ffp-contract=off"],
            optional=True,
        ),
        Extension(
            "nexus_gateway._arena",
            sources=["native/arena.c"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-D_POSIX_C_SOURCE=200809L"],
            optional=True,
        ),
    ]
)
