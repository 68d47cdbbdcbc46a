"""tessel: a tensor-program compiler on apache-tvm-ffi.

Importing the package loads libtessel (see ``tessel._lib`` for where it is looked for) and
registers its IR node types with tvm-ffi.
"""

from . import _lib
from . import arith, ir, tile, transform
from .text import as_text, parse, parse_expr
from . import target
from .build import Module, build, lower  # after `target`: the function `build` hides the module
from .jit import autotune, jit  # the decorator `jit` hides the package (its helpers hang off it)
from .schedule import Schedule, ScheduleError

__version__ = "0.1.0"
__all__ = ["arith", "ir", "tile", "transform", "target", "parse", "parse_expr", "as_text", "build", "lower",
           "Module", "jit", "autotune", "Schedule", "ScheduleError", "__version__"]
