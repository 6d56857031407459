"""autodiff_tutor: automatic differentiation you can read, for teaching.

The public API is re-exported here; nothing else lives in this file.
"""

from autodiff_tutor.errors import AutodiffError

__all__ = ["AutodiffError"]
__version__ = "0.1.0"
