"""A CPU model of the synchronization of a warp-specialized Hopper tile kernel (what
LowerTileOpsHopper makes), for checking its protocol on a machine without an H200.

The model interprets the lowered kernel for one block at a time: the producer thread and each
consumer warp (as its lane 0, which issues the warp's mbarrier arrivals; a warp counts 32
threads at a named barrier) run as coroutines in a random interleaving, and TMA loads complete
at random later steps. Only what orders the threads is interpreted: loops and branches whose
bodies synchronize, integer `local` buffers (the running iteration count), mbarriers (arrival
counts, transaction bytes, phases and try_wait.parity), named barriers, wgmma groups
(commit / wait_group) and the ring stages that TMA writes and wgmma reads. Arithmetic on
fragments is skipped. It raises ProtocolError when

- the threads deadlock (every one waits and no load is in flight);
- a consumer's n-th pass of a full barrier is not the barrier's n-th phase (a wait on the wrong
  parity let it through early, or it missed a phase);
- a wgmma reads a stage whose load has not landed, whose content is another phase's than the
  one this warp waited for, or another tile's (the producer's block indices at the load are
  not the consumer's);
- a TMA load overwrites a stage that a wgmma group not yet waited for still reads;
- a thread writes a staging tile that a TMA store not yet waited for reads, or a TMA store reads
  a region of it that a warp of the block wrote and has not fenced (fence.proxy.async) since.
"""

from __future__ import annotations

import random
import re
from typing import Any

from tessel._lib import get_global_func


class ProtocolError(AssertionError):
    pass


class NotModelled(Exception):
    """A value the model does not compute (a float, a fragment) was needed."""


SYNC_OPS = {
    "ptx_mbarrier_init", "ptx_mbarrier_wait", "ptx_mbarrier_arrive",
    "ptx_mbarrier_arrive_expect_tx", "ptx_tma_load", "ptx_wgmma_mma_async",
    "ptx_wgmma_mma_async_rs", "ptx_wgmma_commit_group", "ptx_wgmma_wait_group",
    "ptx_named_barrier_sync", "ptx_named_barrier_arrive", "tvm_storage_sync",
    "ptx_tma_store", "ptx_tma_store_commit_group", "ptx_tma_store_wait_group",
    "ptx_fence_proxy_async",
}


BINARY = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b,
    "Div": lambda a, b: int(a / b), "Mod": lambda a, b: a - b * int(a / b),
    "Min": min, "Max": max,
    "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "LT": lambda a, b: a < b,
    "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
}
BITWISE = {"bitwise_xor": lambda a, b: a ^ b, "bitwise_and": lambda a, b: a & b,
           "bitwise_or": lambda a, b: a | b, "shift_left": lambda a, b: a << b,
           "shift_right": lambda a, b: a >> b}


def keep_newest(groups: list, keep: int) -> list:
    """The groups still in flight after a wait_group(keep) (wgmma or TMA store): the newest."""
    return groups[len(groups) - keep:] if keep else []


def lower_for_hopper(text: str):
    """The module after LowerTileOpsHopper."""
    get = get_global_func
    mod = get("tessel.ir.ParseModule")(text, "<model>")
    return get("tessel.transform.RunPass")(get("tessel.transform.GetPass")("LowerTileOpsHopper"),
                                           mod)


def base_name(buf) -> str:
    """A buffer's name without the suffix that printing and parsing again may add."""
    return re.sub(r"_\d+$", "", str(buf.name))


def op_name(call) -> str:
    return str(call.op.name) if hasattr(call.op, "name") else ""


class _Barrier:
    def __init__(self, count: int):
        self.count, self.pending, self.tx, self.done = count, count, 0, 0

    def _check(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.done += 1
            self.pending = self.count

    def arrive(self) -> None:
        if self.pending <= 0:
            raise ProtocolError("an mbarrier got more arrivals than its count")
        self.pending -= 1
        self._check()

    def expect(self, nbytes: int) -> None:
        self.tx += nbytes

    def complete(self, nbytes: int) -> None:
        self.tx -= nbytes
        self._check()


class _Role:
    """One simulated thread: the producer's, or a consumer warp's lane 0."""

    def __init__(self, name: str, tx: int):
        self.name, self.tx = name, tx
        self.passes: dict = {}     # barrier index -> full-barrier passes so far
        self.acquired: dict = {}   # barrier index -> the phase its last pass acquired
        self.groups: list = []     # committed wgmma groups: lists of (ring, stage)
        self.open: list = []       # reads of the group being issued
        self.blocked_on = ""
        self.env: dict = {}
        self.stores: list = []       # committed TMA store groups: lists of (tile, lo, hi)
        self.open_stores: list = []
        self.unfenced: list = []     # staging (tile, element) written since the last fence


class Model:
    """Runs the warp-specialized kernel of `mod` (the first function's) for the given values of
    its shape variables (by name)."""

    def __init__(self, mod, shapes: dict, seed: int = 0):
        self.rng = random.Random(seed)
        self.shapes = dict(shapes)
        func = list(mod.functions.values())[0]
        self.kernel = self._find_kernel(func.body)
        plan = str(self.kernel.annotations["tessel.tile_plan"])
        self.stages = int(re.search(r"into (\d+) stages", plan).group(1))
        self._sync_cache: dict = {}  # statement -> whether anything in it synchronizes

    # ---- finding the kernel ----
    def _find_kernel(self, s):
        # The warp-specialized kernel is the `then` of the host's TMA test.
        found = []

        def walk(n):
            if found:
                return
            kind = type(n).__name__
            if kind == "For" and str(n.thread_tag).startswith("blockIdx") and \
                    "tessel.tile_plan" in n.annotations and \
                    str(n.annotations["tessel.tile_plan"]).startswith("warp-specialized"):
                found.append(n)
                return
            for field in ("body", "then_case", "else_case"):
                c = getattr(n, field, None)
                if c is not None:
                    walk(c)
            if kind == "SeqStmt":
                for c in n.seq:
                    walk(c)

        walk(s)
        if not found:
            raise ValueError("no warp-specialized kernel in the module")
        return found[0]

    # ---- expressions ----
    def value(self, e, env: dict) -> Any:
        kind = type(e).__name__
        if kind == "IntImm":
            return int(e.value)
        if kind in ("Var", "SizeVar"):
            if e in env:
                return env[e]
            name = str(e.name_hint)
            for n in (name, re.sub(r"_\d+$", "", name)):
                if n in self.shapes:
                    return self.shapes[n]
            raise NotModelled(f"variable {name}")
        if kind == "Cast":
            v = self.value(e.value, env)
            if isinstance(v, tuple):
                return v
            return int(v)
        if kind in BINARY:
            a = self.value(e.a, env)
            if isinstance(a, tuple) and kind == "Add":
                return a  # a descriptor plus a step within its stage
            return BINARY[kind](a, self.value(e.b, env))
        if kind == "And":
            return self.value(e.a, env) and self.value(e.b, env)
        if kind == "Or":
            return self.value(e.a, env) or self.value(e.b, env)
        if kind == "Not":
            return not self.value(e.a, env)
        if kind == "Select":
            return self.value(e.true_value if self.value(e.condition, env) else e.false_value, env)
        if kind == "BufferLoad":
            b = e.buffer
            mem = env.get("__mem__", {}).get(b.data, {})
            at = self.value(e.indices[0], env)
            if at not in mem:
                raise NotModelled(f"load of {b.name}")
            return mem[at]
        if kind == "Call":
            name = op_name(e)
            args = e.args
            if name.endswith("address_of"):
                load = args[0]
                return (base_name(load.buffer), self.value(load.indices[0], env))
            if name == "ptx_wgmma_desc":
                return self.value(args[0], env)
            if name.endswith("shfl_sync"):
                return self.value(args[0], env)  # lane 0's value, the same in the warp
            for suffix, fn in BITWISE.items():
                if name.endswith(suffix):
                    return fn(self.value(args[0], env), self.value(args[1], env))
            if name.endswith("if_then_else"):
                return self.value(args[1] if self.value(args[0], env) else args[2], env)
            raise NotModelled(f"call {name}")
        raise NotModelled(kind)

    # ---- which statements synchronize ----
    def syncs(self, s) -> bool:
        cache = self._sync_cache
        if s in cache:
            return cache[s]
        kind = type(s).__name__
        if kind == "Evaluate":
            v = s.value
            r = type(v).__name__ == "Call" and op_name(v) in SYNC_OPS
        elif kind == "SeqStmt":
            r = any(self.syncs(c) for c in s.seq)
        elif kind == "BufferStore":
            # The running iteration count, and writes of a shared staging tile.
            r = str(s.buffer.dtype).startswith("int") or str(s.buffer.scope).startswith("shared")
        elif kind == "IfThenElse":
            r = self.syncs(s.then_case) or (s.else_case is not None and self.syncs(s.else_case))
        elif hasattr(s, "body"):
            r = self.syncs(s.body)
        else:
            r = False
        cache[s] = r
        return r

    # ---- statements, as coroutines that yield when they wait ----
    def run(self, s, role: _Role, env: dict):
        kind = type(s).__name__
        if kind == "SeqStmt":
            for c in s.seq:
                yield from self.run(c, role, env)
            return
        if not self.syncs(s):
            return
        if kind == "LetStmt":
            try:
                env[s.var] = self.value(s.value, env)
            except NotModelled:
                pass  # a float or fragment value: nothing that synchronizes reads it
            yield from self.run(s.body, role, env)
        elif kind == "For":
            if not self.syncs(s.body):
                return
            lo, n = self.value(s.min, env), self.value(s.extent, env)
            for i in range(lo, lo + n):
                env[s.loop_var] = i
                yield from self.run(s.body, role, env)
        elif kind == "IfThenElse":
            try:
                c = self.value(s.condition, env)
            except NotModelled as err:
                raise ProtocolError(f"{role.name}: a branch that synchronizes depends on a value "
                                    f"the model does not compute ({err})") from None
            if c:
                yield from self.run(s.then_case, role, env)
            elif s.else_case is not None:
                yield from self.run(s.else_case, role, env)
        elif kind == "Allocate":
            env.setdefault("__mem__", {})[s.buffer_var] = {}
            yield from self.run(s.body, role, env)
        elif kind in ("DeclBuffer", "AttrStmt"):
            yield from self.run(s.body, role, env)
        elif kind == "BufferStore":
            if str(s.buffer.scope).startswith("shared"):
                self.write_staging(s.buffer, self.value(s.indices[0], env), role)
                return
            mem = env.setdefault("__mem__", {}).setdefault(s.buffer.data, {})
            mem[self.value(s.indices[0], env)] = self.value(s.value, env)
        elif kind == "Evaluate":
            yield from self.call(s.value, role, env)

    def _bar(self, addr) -> int:
        name, index = addr
        if name != "tile_bars":
            raise ProtocolError(f"an mbarrier outside tile_bars: {name}")
        return index

    def _stage(self, addr) -> tuple:
        name, index = addr
        size = self.ring_sizes[name]
        stages = 1 if name.endswith("_tile") else self.stages
        return (name, index // (size // stages))

    def call(self, c, role: _Role, env: dict):
        name, args = op_name(c), c.args
        v = lambda i: self.value(args[i], env)  # noqa: E731
        if name == "ptx_mbarrier_init":
            self.bars[self._bar(v(0))] = _Barrier(v(1))
        elif name == "ptx_mbarrier_arrive":
            self.bars[self._bar(v(0))].arrive()
        elif name == "ptx_mbarrier_arrive_expect_tx":
            b = self.bars[self._bar(v(0))]
            b.expect(v(1))
            b.arrive()
        elif name == "ptx_mbarrier_wait":
            index, parity = self._bar(v(0)), v(1)
            b = self.bars[index]
            while b.done % 2 == parity:  # try_wait.parity: passes once phase `parity` is done
                role.blocked_on = f"mbarrier {index} parity {parity} (phases done: {b.done})"
                yield False
            role.blocked_on = ""
            if index in self.full_bars:
                n = role.passes.get(index, 0)
                if b.done - 1 != n:
                    raise ProtocolError(
                        f"{role.name}: pass {n} of full barrier {index} acquired phase "
                        f"{b.done - 1}")
                role.passes[index] = n + 1
                role.acquired[index] = b.done - 1
            yield True
        elif name == "ptx_tma_load":
            stage, index = self._stage(v(0)), self._bar(v(2))
            self.full_bars.add(index)
            for g in role_groups(self.roles):
                if stage in g:
                    raise ProtocolError(f"{role.name}: TMA into {stage} while a wgmma group not "
                                        f"yet waited for reads it")
            b = self.bars[index]
            tile = _tile_of(env)
            self.content[stage] = None  # being written
            self.loads.append((stage, index, b.done, tile, b, self._box_bytes(args[1])))
            yield True
        elif name in ("ptx_wgmma_mma_async", "ptx_wgmma_mma_async_rs"):
            operands = [v(1), v(2)] if name == "ptx_wgmma_mma_async" else [v(2)]
            for addr in operands:
                if addr[0] not in self.ring_sizes:
                    continue  # registers
                stage = self._stage(addr)
                got = self.content.get(stage)
                if got is None:
                    raise ProtocolError(f"{role.name}: wgmma reads {stage} before its load "
                                        f"landed")
                index, phase, tile = got
                if role.acquired.get(index) != phase:
                    raise ProtocolError(f"{role.name}: wgmma reads {stage} holding phase {phase} "
                                        f"of barrier {index}; the warp waited for phase "
                                        f"{role.acquired.get(index)}")
                mine = _tile_of(env)
                if tile != mine:
                    raise ProtocolError(f"{role.name}: wgmma of tile {mine} reads {stage} "
                                        f"loaded for tile {tile}")
                role.open.append(stage)
        elif name == "ptx_wgmma_commit_group":
            role.groups.append(role.open)
            role.open = []
        elif name == "ptx_wgmma_wait_group":
            role.groups = keep_newest(role.groups, v(0))
        elif name in ("ptx_named_barrier_sync", "ptx_named_barrier_arrive"):
            bid, count = v(0), v(1)
            nb = self.named.setdefault(bid, {"arrived": 0, "gen": 0, "count": count})
            if nb["count"] != count:
                raise ProtocolError(f"named barrier {bid} used with counts {nb['count']} and "
                                    f"{count}")
            gen = nb["gen"]
            nb["arrived"] += 32
            if nb["arrived"] > count:
                raise ProtocolError(f"named barrier {bid}: more than {count} threads arrived")
            if nb["arrived"] == count:
                nb["arrived"], nb["gen"] = 0, gen + 1
            if name == "ptx_named_barrier_sync":
                while nb["gen"] == gen:
                    role.blocked_on = f"named barrier {bid}"
                    yield False
                role.blocked_on = ""
            yield True
        elif name == "ptx_tma_store":
            tile, lo = v(1)
            tile = tile.replace("_pairs", "")
            hi = lo + self._box_elems(args[0])
            for r in self.roles:
                for name_, e in r.unfenced:
                    if name_ == tile and lo <= e < hi:
                        raise ProtocolError(f"{role.name}: a TMA store reads {tile}[{e}], which "
                                            f"{r.name} wrote and has not fenced since")
            role.open_stores.append((tile, lo, hi))
        elif name == "ptx_tma_store_commit_group":
            role.stores.append(role.open_stores)
            role.open_stores = []
        elif name == "ptx_tma_store_wait_group":
            role.stores = keep_newest(role.stores, v(0))
        elif name == "ptx_fence_proxy_async":
            role.unfenced = []
        elif name == "tvm_storage_sync":
            gen = self.block_sync["gen"]
            self.block_sync["arrived"] += 1
            if self.block_sync["arrived"] == len(self.roles):
                self.block_sync["arrived"], self.block_sync["gen"] = 0, gen + 1
            while self.block_sync["gen"] == gen:
                role.blocked_on = "__syncthreads"
                yield False
            role.blocked_on = ""

    def write_staging(self, buf, index: int, role: _Role) -> None:
        # In elements of the tile: a 32-bit view of a 16-bit tile covers two of them.
        tile = base_name(buf).replace("_pairs", "")
        width = 2 if str(buf.dtype) == "uint32" else 1
        for e in range(index * width, index * width + width):
            for r in self.roles:
                for group in r.stores + [r.open_stores]:
                    for name, lo, hi in group:
                        if name == tile and lo <= e < hi:
                            raise ProtocolError(f"{role.name}: writes {tile}[{e}] while a TMA "
                                                f"store of {r.name} not yet waited for reads it")
            role.unfenced.append((tile, e))

    def _land(self) -> None:
        """Completes a random TMA load in flight."""
        k = self.rng.randrange(len(self.loads))
        stage, index, phase, tile, b, nbytes = self.loads.pop(k)
        self.content[stage] = (index, phase, tile)
        b.complete(nbytes)

    @staticmethod
    def _box_elems(desc) -> int:
        return int(desc.args[-2].value) * int(desc.args[-1].value)

    @staticmethod
    def _box_bytes(desc) -> int:
        # tma_descriptor(dtype, swizzle, data, shape..., strides..., 1..., box rows, box columns)
        args = desc.args
        width = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "float8_e4m3": 1}
        return int(args[-2].value) * int(args[-1].value) * width[str(args[0].value)]

    # ---- one block ----
    def run_block(self, block: dict) -> int:
        """Runs the block whose block variables (by name, e.g. {"bid": 0} or {"bx": 1, ...})
        take the given values; returns the scheduler steps taken."""
        self.bars, self.named, self.content, self.loads = {}, {}, {}, []
        self.full_bars = set()
        self.block_sync = {"arrived": 0, "gen": 0}
        env: dict = {}
        s = self.kernel
        while type(s).__name__ == "For" and str(s.thread_tag).startswith("blockIdx"):
            env[s.loop_var] = block[str(s.loop_var.name_hint)]
            s = s.body
        # Down to the thread loop, noting the ring sizes.
        self.ring_sizes = {}
        while type(s).__name__ != "For" or str(s.thread_tag) != "threadIdx.x":
            if type(s).__name__ == "DeclBuffer" and base_name(s.buffer).endswith(("_ring",
                                                                                   "_tile")):
                self.ring_sizes[base_name(s.buffer)] = int(s.buffer.shape[0].value)
            s = s.body
        threads = int(s.extent.value)
        consumers = threads - 128
        self.roles = [_Role(f"consumer warp {w}", 32 * w) for w in range(consumers // 32)]
        self.roles.append(_Role("producer", consumers))
        runs = []
        for r in self.roles:
            r.env = dict(env)
            r.env[s.loop_var] = r.tx
            runs.append(self.run(s.body, r, r.env))
        alive = list(range(len(runs)))
        stuck = 0
        steps = 0
        while alive:
            steps += 1
            if self.loads and (stuck >= len(alive) or self.rng.random() < 0.3):
                self._land()
                stuck = 0
                continue
            i = self.rng.choice(alive)
            try:
                progressed = next(runs[i])
            except StopIteration:
                alive.remove(i)
                stuck = 0
                continue
            stuck = 0 if progressed else stuck + 1
            if stuck > 50 * len(alive) and not self.loads:
                waits = "; ".join(f"{self.roles[j].name}: {self.roles[j].blocked_on}"
                                  for j in alive)
                raise ProtocolError(f"deadlock in block {block}: {waits}")
        for r in self.roles:
            if r.groups or r.open:
                raise ProtocolError(f"{r.name} ended with wgmma groups not waited for")
            if r.stores or r.open_stores:
                raise ProtocolError(f"{r.name} ended with TMA stores not waited for")
        if self.loads:
            raise ProtocolError("the block ended with TMA loads in flight")
        return steps


def _tile_of(env: dict) -> tuple:
    """The block indices bound in `env`, by name: the tile a role is working on."""
    out = []
    for k, x in env.items():
        name = re.sub(r"_\d+$", "", str(getattr(k, "name_hint", "")))
        if name in ("bx", "by", "bz"):
            out.append((name, x))
    return tuple(sorted(out))


def role_groups(roles) -> list:
    out = []
    for r in roles:
        out.extend(r.groups)
        if r.open:
            out.append(r.open)
    return out

