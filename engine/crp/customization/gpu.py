"""GpuCustomizer: CRP customization on the GPU by Bellman-Ford (Delling, Kobitzsch,
Werneck, "Customizing Driving Directions with GPUs"); engine/kernels/crp_customize.cu.

Everything metric-independent goes to the device once, in ``__init__``: each level's
in-edges (engine.crp.customization.layout), offsets, and the variant that costs it. A run
then does, level by level on one stream with no host wait (the global variant reads
a flag every few rounds). One stream, not the paper's two: the paper costs the
boundary arcs beside level 0, but here a shortcut already includes its exit arc's
cost and the turn onto it (engine.crp.partition.overlay), and the decoder costs every arc and
turn in one kernel before level 0, so there is nothing left to overlap.

- mapping: ``cost[i] = W[in_weight[i]]`` (W = turn weights, or S of the level below);
- search: injection, rounds until nothing changes, collection into S_l;
  *minplus* (the default above level 0): one block per (cell, entry batch), the
  cell's rows in shared memory, each round a min-plus product of the changed
  subcells' rows with their matrices, register-tiled (layout.MinplusLayout);
  *local*: the same blocks, but each distance pulls over its in-edges one by one;
  *global* (a cell too big for shared memory): one launch per round, a thread per
  distance in global memory, then a collection kernel.

The variant per level comes from ``default_variant`` or the ``level_variants``
argument; ``VARIANTS`` maps names to classes, so another one (microinstructions for
level 0) plugs in with ``register_variant``. Results equal the CPU's
``customize_costs`` bit for bit, overflow (CostOverflow) included.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from engine.crp.customization import layout
from engine.crp.customization.issue import check_overflow, issue_levels
from engine.crp.customization.microcode import compile_microcode
from engine.crp.customization import microcode_gpu

MODULE = "crp_customize"
SHARED_INTS = 12288          # local: distances per block by default (48 KB, no opt-in)
MAX_THREADS = 1024           # local: most threads per block
MIN_BLOCKS = 264             # local: split entries until about 2 blocks per H100 SM
ROUNDS_PER_CHECK = 8         # global: rounds launched between two reads of the flags
MINPLUS_SHARED_INTS = 24576  # min-plus: rows per block at most (96 KB: 2 blocks per H100 SM)


def default_variant(topo) -> str:
    """Microinstructions for level 0 (the paper's choice for the lowest level: 0.15 ms
    on NY against 0.76 ms by Bellman-Ford), min-plus products above (a cell too big
    for shared memory runs global). Measured on an H100 against the paper's rule (local
    Bellman-Ford for levels with many cells, global for the few big ones), levels above
    0 only: NY 0.83 ms against 1.80, the generated 2 M graph 7.8 ms against 47.2."""
    return "microcode" if topo.level == 0 else "minplus"


class DoesNotFit(ValueError):
    """A variant cannot cost this level (a cell too big for shared memory)."""


class LevelVariant:
    """One level on the device: in-edges, offsets, and the mapping phase. Subclasses
    implement ``search(S, stats_row) -> dict`` (injection and rounds; stats_row[0] |=
    overflow, stats_row[1] = rounds, stats_row[2]: free for the variant) and
    ``collect(S)``."""
    name = ""
    needs_edges = True           # reads the level's in-edges (``reverse``)

    def __init__(self, backend, topo, reverse: layout.ReverseCsr | None, options: dict,
                 overlay=None) -> None:
        xp = backend.xp
        # level 0's host microcode (12.7 GB at 24 M nodes) is only read while the
        # microcode level uploads it: no level keeps a reference, or it outlives the upload
        self.options = {k: v for k, v in options.items() if k != "microcode"}
        self.backend, self.topo = backend, topo
        self.vertex_first = xp.asarray(topo.vertex_first, dtype=xp.int32)
        if not self.needs_edges:
            return
        self.num_edges = int(reverse.in_from.size)
        self.entry_first = xp.asarray(topo.entry_first, dtype=xp.int32)
        self.exit_first = xp.asarray(topo.exit_first, dtype=xp.int32)
        self.clique_first = xp.asarray(topo.clique_first, dtype=xp.int64)
        self.in_first = xp.asarray(reverse.in_first)
        self.in_from = xp.asarray(reverse.in_from)
        self.in_weight = xp.asarray(reverse.in_weight)
        self.in_cost = xp.empty(self.num_edges, dtype=xp.int32)
        backend.kernel(MODULE, "gather_costs")            # compiled before any timing

    def map_costs(self, weights) -> None:
        self.backend.launch(MODULE, "gather_costs",
                            (weights, self.in_weight, self.in_cost, self.num_edges),
                            threads=self.num_edges)

    def search(self, S, stats_row) -> dict:
        raise NotImplementedError

    def collect(self, S) -> None:
        """Write S_l from the distances (nothing to do where the search wrote it)."""


class LocalLevel(LevelVariant):
    name = "local"

    def __init__(self, backend, topo, reverse, options, overlay=None) -> None:
        super().__init__(backend, topo, reverse, options)
        t = topo
        # the largest block: its distances, and 16 bytes of dirty masks, in shared memory
        most = min(options.get("shared_ints", SHARED_INTS),
                   backend.shared_memory_per_block() // 4 - 4)
        batch = layout.local_batch(t.vertex_first, t.entry_first, t.exit_first, most,
                                   options.get("min_blocks", MIN_BLOCKS))
        if batch == 0:
            raise DoesNotFit(f"a level-{t.level} cell does not fit in shared memory")
        cells, entries = layout.entry_blocks(t.entry_first, t.exit_first, batch)
        self.shared_bytes = 4 * layout.shared_bucket(t.vertex_first, t.entry_first,
                                                     t.exit_first, batch, most)
        self.batch, self.num_blocks = batch, int(cells.size)
        self.block_cell = backend.xp.asarray(cells)
        self.block_entry = backend.xp.asarray(entries)
        self.threads = options.get("threads") or _block_threads(
            t, cells, entries, batch, options.get("max_threads", MAX_THREADS))
        watch, mark = layout.dirty_groups(t.vertex_first, reverse)
        if not options.get("skip_settled", True):
            watch[:] = mark[:] = -1
        self.watch, self.mark = backend.xp.asarray(watch), backend.xp.asarray(mark)
        backend.kernel(MODULE, "bf_local")

    def search(self, S, stats_row) -> dict:
        if self.num_blocks:
            self.backend.launch(
                MODULE, "bf_local",
                (self.block_cell, self.block_entry, self.vertex_first, self.entry_first,
                 self.exit_first, self.in_first, self.in_from, self.in_cost, self.watch,
                 self.mark, self.clique_first,
                 np.int32(self.batch), S, stats_row),
                grid=(self.num_blocks,), block=(self.threads,), shared_mem=self.shared_bytes)
        return {"batch": self.batch, "blocks": self.num_blocks, "threads": self.threads,
                "shared_kb": self.shared_bytes // 1024}


def _block_threads(topo, cells, entries, batch, most: int) -> int:
    """Threads per local block: about 4 distances each on an average block, 64..most."""
    if cells.size == 0:
        return 64
    nv = np.diff(topo.vertex_first)[cells].astype(np.int64)
    nb = np.minimum(np.diff(topo.entry_first)[cells] - entries, batch)
    average = float((nv * nb).mean()) / 4
    return int(min(most, max(64, 1 << max(0, int(average).bit_length() - 1))))


class GlobalLevel(LevelVariant):
    name = "global"

    def __init__(self, backend, topo, reverse, options, overlay=None) -> None:
        super().__init__(backend, topo, reverse, options)
        xp, t = backend.xp, topo
        first = layout.pair_first(t.vertex_first, t.entry_first, t.exit_first)
        self.pairs = int(first[-1])
        self.pair_first = xp.asarray(first)
        self.dist = xp.empty(self.pairs, dtype=xp.int32)
        self.per_check = int(options.get("rounds_per_check", ROUNDS_PER_CHECK))
        # pull Bellman-Ford settles within (vertices of the largest cell) + 1 rounds
        self.max_rounds = int(np.diff(t.vertex_first).max(initial=0)) + 2
        self.flags = xp.zeros(2 * (self.max_rounds + self.per_check), dtype=xp.int32)
        for name in ("bf_global_init", "bf_global_round", "bf_global_collect"):
            backend.kernel(MODULE, name)

    def search(self, S, stats_row) -> dict:
        if self.pairs == 0:
            return {"rounds": 0}
        b, cells = self.backend, np.int32(self.topo.num_cells)
        self.flags.fill(0)
        b.launch(MODULE, "bf_global_init", (self.pair_first, cells, self.entry_first,
                                            self.dist, self.pairs), threads=self.pairs)
        done = 0
        while True:
            for r in range(done, done + self.per_check):
                b.launch(MODULE, "bf_global_round",
                         (np.int32(r), self.pair_first, cells, self.vertex_first,
                          self.entry_first, self.in_first, self.in_from, self.in_cost,
                          self.dist, self.pairs, self.flags), threads=self.pairs)
            flags = b.to_host(self.flags[2 * done:2 * (done + self.per_check)]).reshape(-1, 2)
            quiet = np.flatnonzero(flags[:, 0] == 0)
            if quiet.size:
                last = done + int(quiet[0])
                stats_row[:2] = b.xp.asarray([int(flags[quiet[0], 1]), last + 1], dtype=np.int32)
                return {"rounds": last + 1}
            done += self.per_check
            if done >= self.max_rounds:
                raise RuntimeError(f"level {self.topo.level}: Bellman-Ford did not converge")

    def collect(self, S) -> None:
        n = self.topo.num_shortcuts
        self.backend.launch(MODULE, "bf_global_collect",
                            (self.clique_first, np.int32(self.topo.num_cells), self.pair_first,
                             self.vertex_first, self.entry_first, self.exit_first, self.dist,
                             S, n), threads=n)


class MicrocodeLevel(LevelVariant):
    """Level 0 by microinstructions (engine.crp.customization.microcode): mapping, the layers and
    collection in one kernel that reads the turn weights itself."""
    name = "microcode"
    needs_edges = False          # the kernel reads the turn weights through the microcode

    def __init__(self, backend, topo, reverse, options, overlay=None) -> None:
        from types import SimpleNamespace
        if topo.level != 0:
            raise DoesNotFit("microinstructions cost level 0 only")
        super().__init__(backend, topo, reverse, options)
        mc = options.get("microcode") or compile_microcode(SimpleNamespace(levels={0: topo}), 0)
        self.device = microcode_gpu.DeviceMicrocode(
            mc, backend, options.get("microcode_slots", microcode_gpu.SLOTS_PER_BLOCK))
        self.threads = options.get("microcode_threads", microcode_gpu.THREADS)
        self._weights = None

    def map_costs(self, weights) -> None:
        self._weights = weights          # the kernel gathers them itself

    def search(self, S, stats_row) -> dict:
        microcode_gpu.run_microcode_gpu(self.device, self._weights, self.backend, out=S,
                                        overflow=stats_row[0:1], threads=self.threads)
        return {}


class MinplusLevel(LevelVariant):
    """Levels above 0 as min-plus products (kernel bf_minplus): a block per (cell, batch
    of entries) holds the cell's rows in shared memory and multiplies them, round after
    round, by the subcells' matrices read from S_{l-1} in place, so mapping is only
    the largest finite weight (for the overflow bound)."""
    name = "minplus"
    needs_edges = False

    def __init__(self, backend, topo, reverse, options, overlay=None) -> None:
        if topo.level == 0 or overlay is None:
            raise DoesNotFit("min-plus products cost the levels above 0")
        super().__init__(backend, topo, reverse, options)
        xp, t = backend.xp, topo
        lay = _minplus_layout(overlay, t.level)
        # the slots' table, then two bit sets of rows (changed before / in this round)
        words = (int(np.diff(t.vertex_first).max(initial=0)) + 31) // 32
        per_slot = 7 * lay.max_slots + 1 + 2 * words
        below = overlay.levels[t.level - 1]
        cap = backend.shared_memory_per_block() // 4 - 16     # the device's opt-in, in ints
        min_blocks = options.get("min_blocks", MIN_BLOCKS)
        shape = layout.minplus_shape(t.vertex_first, t.entry_first, t.exit_first, lay,
                                     below.exit_first, per_slot, min(MINPLUS_SHARED_INTS, cap),
                                     min_blocks, backend.multiprocessors())
        most = min(_per_level(options, "minplus_shared_ints", t.level, shape.shared_ints), cap)
        batch, stride = layout.minplus_batch(t.vertex_first, t.entry_first, t.exit_first,
                                             most, min_blocks, per_slot)
        if batch == 0:
            raise DoesNotFit(f"a level-{t.level} cell does not fit in shared memory")
        cells, entries = layout.entry_blocks(t.entry_first, t.exit_first, batch)
        nv = int(np.diff(t.vertex_first)[cells].max(initial=0))
        self.shared_bytes = 4 * (nv * stride + per_slot)
        self.batch, self.stride, self.num_blocks = batch, stride, int(cells.size)
        self.kernel_name = minplus_kernel(
            stride, _per_level(options, "minplus_kt", t.level, 0),
            _per_level(options, "minplus_unroll", t.level, shape.unroll))
        fn = backend.kernel(MODULE, self.kernel_name)
        self.threads = min(_per_level(options, "minplus_threads", t.level, shape.threads),
                           int(fn.max_threads_per_block))      # registers may allow fewer
        self.below_shortcuts = below.num_shortcuts
        i32, i64, i8 = np.int32, np.int64, np.int8             # the kernel's parameter types
        arrays = ((cells, i32), (entries, i32), (t.vertex_first, i32), (t.entry_first, i32),
                  (t.exit_first, i32), (t.clique_first, i64), (lay.slot_first, i32),
                  (lay.slot_cell, i32), (lay.slot_row, i32), (below.entry_first, i32),
                  (below.exit_first, i32), (below.clique_first, i64), (lay.exit_row, i32),
                  (lay.exit_slot, i8), (lay.entry_row, i32), (lay.entry_slot, i8))
        self.args = tuple(xp.asarray(a, dtype=d) for a, d in arrays)
        self.max_slots = lay.max_slots
        self._weights = None
        for name in ("finite_max", self.kernel_name):
            backend.kernel(MODULE, name)

    def map_costs(self, weights) -> None:
        self._weights = weights

    def search(self, S, stats_row) -> dict:
        b = self.backend
        if self.num_blocks:
            b.launch(MODULE, "finite_max", (self._weights, self.below_shortcuts, stats_row[2:]),
                     grid=(min(1024, (self.below_shortcuts + 255) // 256 or 1),), block=(256,))
            b.launch(MODULE, self.kernel_name,
                     self.args + (np.int32(self.batch), np.int32(self.stride),
                                  np.int32(self.max_slots),
                                  np.int32(not self.options.get("skip_rows", True)),
                                  self._weights, S, stats_row),
                     grid=(self.num_blocks,), block=(self.threads,),
                     shared_mem=self.shared_bytes)
        return {"batch": self.batch, "blocks": self.num_blocks, "threads": self.threads,
                "shared_kb": self.shared_bytes // 1024}


def minplus_kernel(stride: int, kt: int = 0, unroll: int = 1) -> str:
    """The min-plus kernel: ``kt`` entries per thread (4, or 8 where rows hold a multiple
    of 8; 0: the most that fits), rows ``unroll`` at a time (1, 4 or 8)."""
    kt = kt or (4 if stride == 4 else 8)
    while stride % kt:
        kt //= 2
    return f"bf_minplus_k{kt}" + (f"_u{unroll}" if unroll > 1 else "")


def _per_level(options: dict, key: str, level: int, default: int) -> int:
    """An option's value for ``level``: one number for all, or a mapping level -> number."""
    value = options.get(key, default)
    return value.get(level, default) if isinstance(value, Mapping) else value


VARIANTS: dict[str, type[LevelVariant]] = {"local": LocalLevel, "global": GlobalLevel,
                                           "microcode": MicrocodeLevel,
                                           "minplus": MinplusLevel}


def register_variant(name: str, cls: type[LevelVariant]) -> None:
    """Make ``name`` a choice of ``level_variants`` (e.g. "microcode" for level 0)."""
    VARIANTS[name] = cls


class GpuCustomizer:
    """Device state for customizing one overlay; ``run`` costs every level.

    ``level_variants``: None (``default_variant``), a callable topo -> name, a mapping
    level -> name (levels not named use the default), or a sequence of names. A local
    level whose largest cell does not fit in shared memory runs global instead.
    ``options``: threads (local block size), max_threads, min_blocks, shared_ints (local:
    distances per block, capped by the device's opt-in shared memory), skip_settled
    (local: re-pull only vertices whose group changed, default True), rounds_per_check,
    minplus_shared_ints, minplus_threads, minplus_unroll, minplus_kt (min-plus: rows per
    block, block size, rows loaded at once, entries per thread; one number, or a mapping
    level -> number; default layout.minplus_shape), skip_rows (min-plus: multiply only
    the rows changed in the round before, default True), microcode_slots and
    microcode_threads (level 0: slots per block, block size)."""

    def __init__(self, overlay, backend, level_variants=None, **options) -> None:
        self.overlay, self.backend = overlay, backend
        self.num_turns = overlay.turns.num_turns
        with backend.active():
            self.levels = build_levels(backend, overlay.levels, level_variants, options, overlay)

    @property
    def variants(self) -> list[str]:
        return [lv.name for lv in self.levels]

    def run(self, turn_weight):
        """(S_l device arrays, per-level records); CostOverflow names the lowest level
        with a path cost of 2^31 or more."""
        b, xp = self.backend, self.backend.xp
        with b.active():
            weights = xp.asarray(turn_weight, dtype=xp.int32)
            if weights.shape != (self.num_turns,):
                raise ValueError(f"turn weights: {weights.shape} for {self.num_turns} turns")
            issued = issue_levels(b, self.levels, weights)
            flags = b.to_host(issued.stats)
        records = issued.records(flags)
        check_overflow(self.levels, flags)
        return issued.shortcuts, records


def build_levels(backend, topos, level_variants, options: dict, source) -> list[LevelVariant]:
    """The level variant of each of ``topos`` on ``backend`` (its device current);
    ``source`` is what they read as the overlay (the whole overlay, or one GPU's range
    of it: engine.crp.customization.cell_ranges.RangeView). A level that does not fit
    its variant runs global."""
    levels: list[LevelVariant] = []
    for topo in topos:
        name = _variant_name(level_variants, topo)
        try:
            reverse = _reverse(topo) if VARIANTS[name].needs_edges else None
            levels.append(VARIANTS[name](backend, topo, reverse, options, source))
        except DoesNotFit:
            levels.append(GlobalLevel(backend, topo, _reverse(topo), options))
    return levels


def _minplus_layout(source, level: int) -> layout.MinplusLayout:
    """The min-plus layout of ``level``: a range's own (RangeView), or the overlay's."""
    own = getattr(source, "minplus_layout", None)
    return own(level) if own is not None else layout.minplus_layout(source, level)


def _reverse(topo) -> layout.ReverseCsr:
    return layout.reverse_csr(topo.vertex_first, topo.edge_first, topo.edge_to,
                              topo.edge_weight)


def _variant_name(level_variants, topo) -> str:
    if level_variants is None:
        name = default_variant(topo)
    elif callable(level_variants):
        name = level_variants(topo)
    elif isinstance(level_variants, Mapping):
        name = level_variants.get(topo.level) or default_variant(topo)
    else:
        name = level_variants[topo.level]
    if name not in VARIANTS:
        raise ValueError(f"unknown customization variant {name!r} for level {topo.level}; "
                         f"choose one of {', '.join(VARIANTS)}")
    return name
