"""The just-in-time front end: ``@tessel.jit`` (kernel.py), its memory and disk caches
(cache.py), the call signature and output allocation (args.py), and ``@tessel.autotune``
(autotune.py, with its timing records in records.py and progress display in progress.py).
docs/jit.md describes them.

``tessel.jit`` is the decorator; the cache helpers hang off it: ``tessel.jit.cache_dir()``,
``tessel.jit.clear_cache()``.
"""

from .autotune import Autotuner, autotune
from .cache import cache_dir, clear_cache, list_entries
from .kernel import CompiledKernel, JitFunction, TextTemplate, jit

jit.cache_dir = cache_dir
jit.clear_cache = clear_cache
jit.list_entries = list_entries
jit.JitFunction = JitFunction
jit.CompiledKernel = CompiledKernel
jit.TextTemplate = TextTemplate

__all__ = ["jit", "autotune", "Autotuner", "JitFunction", "CompiledKernel", "TextTemplate",
           "cache_dir", "clear_cache", "list_entries"]
