"""pip install ./python (from a checkout of attn.h; offline: add --no-build-isolation to use the
installed setuptools): the package and its two shared libraries, attn_py.c over ../attn.h compiled
for this machine (float and float64). ATTN_CFLAGS replaces the default flags
"-O2 -march=native -fopenmp" (for example "-O2" for a build that chooses its kernels at run time)."""
import os
import shlex

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if not os.path.exists(os.path.join(ROOT, "attn.h")):
    raise SystemExit(f"setup.py: attn.h not found in {ROOT}: install from the repository's python/ directory")
FLAGS = shlex.split(os.environ.get("ATTN_CFLAGS", "-O2 -march=native -fopenmp"))
LINK = ["-fopenmp"] if "-fopenmp" in FLAGS else []


def lib(name, macros):
    return Extension(name, sources=["attn_py.c"], include_dirs=[ROOT], define_macros=macros,
                     extra_compile_args=FLAGS, extra_link_args=LINK, libraries=["m"])


setup(name="attn", version="0.2.0", description="attn.h's attention kinds and transformers from Python (ctypes)",
      license="MIT", packages=["attn"], python_requires=">=3.8",
      ext_modules=[lib("attn._libattn", []), lib("attn._libattn64", [("ATTN_DOUBLE", "1")])])
