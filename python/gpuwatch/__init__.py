"""gpuwatch: why the GPU sits idle in a training run, and what to change.

The work is done by the gpuwatch command and the shim it preloads (libgpuwatch.so), both
installed inside this package; `gpuwatch ...` and `python -m gpuwatch ...` run the command.
"""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def command_path():
    """The gpuwatch command inside this package."""
    return os.path.join(_HERE, "bin", "gpuwatch")


def shim_path():
    """The shim `gpuwatch run` preloads (LD_PRELOAD), inside this package."""
    return os.path.join(_HERE, "lib", "libgpuwatch.so")
