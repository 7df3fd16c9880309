"""Build the small C core (native/) as nexus_gateway._slb (SLB scan) and ._kv (KV blocks); metadata lives in pyproject.toml.

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
    ]
)
