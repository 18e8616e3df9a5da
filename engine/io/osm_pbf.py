"""The fast OpenStreetMap reader of .osm.pbf files: blocks decoded in Numba on a thread
pool (engine.io.pbf_file, engine.io.pbf_decode), everything after that in NumPy and
parallel Numba passes (engine.io.pbf_ref_index).

It reads what engine.io.osm's libosmium reader reads, with the same result: car ways
(KeyFilter highway/route, then engine.io.osm_tags.way_profile), type=restriction
relations (engine.io.osm_restrictions.read_restriction) and the locations of the
nodes the kept ways use. Python runs per block and per *distinct* tag combination,
never per node or per way:

  * in each block the 18 keys way_profile reads (osm_tags.WAY_KEYS) are looked up in
    the block's string table once; each way becomes a row of value-string ids, and
    each distinct row ("tag combination", a few hundred in a country) gets its
    profile from way_profile once, so classification is way_profile's by
    construction;
  * the tag rows of a block, and its distinct rows, are made on the decoding worker
    thread (Numba, no GIL); the file-order consumer only interns the strings of new
    combinations;
  * ways that are not kept are dropped in the block, so only kept ways' node refs
    are held (8 bytes each), plus every node's id and location (16 bytes); refs
    become indices of the used nodes through an id -> row table where node ids are
    compact (generated or renumbered files), else through one sort;
  * restriction relations are few (about one per 300 road nodes): each is read by
    read_restriction from its decoded tags and members.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from engine.io.limits import memory_budget, over_budget
from engine.io.osm_graph import INVALID_COORD, WaysRead
from engine.io.osm_report import OsmReport
from engine.io.osm_restrictions import read_restriction
from engine.io.osm_tags import WAY_KEYS, way_profile
from engine.io.pbf_file import Damaged, data_blocks
from engine.io.pbf_ref_index import compact_index
from engine.io.pbf_tags import distinct_rows, key_slots, packed_keys, way_rows

__all__ = ["read_pbf", "PbfWays"]

_KEY_BLOB, _KEY_FIRST = packed_keys(WAY_KEYS)
_HIGHWAY, _ROUTE = WAY_KEYS.index("highway"), WAY_KEYS.index("route")
_MEMBER_TYPE = "nwr"

# What read_restriction reads of an osmium relation: .tags (get, iteration of .k) and
# .members (.type, .ref, .role).
Tag = namedtuple("Tag", "k v")
Member = namedtuple("Member", "type ref role")
Relation = namedtuple("Relation", "tags members")


class _Tags(tuple):
    """A relation's tags as osmium's TagList answers: the first value of a key."""
    def get(self, key, default=None):
        for t in self:
            if t.k == key:
                return t.v
        return default


class PbfWays:
    """The kept ways so far, block by block, and what their tag combinations mean."""

    def __init__(self) -> None:
        self.values: dict[bytes, int] = {}      # value string -> global id
        self.value_text: list[str] = []
        self.combos: dict[bytes, int] = {}      # row of global value ids -> combination
        self.profiles: list = []                # combination -> way_profile or None
        self._kept = np.zeros(0, bool)          # combination -> profile is not None
        self.ids, self.lengths, self.refs, self.combo_of = [], [], [], []

    def add_block(self, raw, str_start, str_end, way_id, way_nrefs, refs, tags,
                  report: OsmReport) -> None:
        """Keep the block's car ways with two refs or more (``tags``: _way_tags)."""
        candidate, distinct, inv = tags
        combo = self._combinations(raw, str_start, str_end, distinct)[inv]
        kept_combo = self._kept[combo] if combo.size else np.zeros(0, bool)
        report.ways_dropped += int(combo.size - kept_combo.sum())
        keep = np.zeros(way_id.size, bool)
        keep[candidate[kept_combo]] = True
        keep &= way_nrefs >= 2
        combo_of = np.zeros(way_id.size, np.int32)
        combo_of[candidate] = combo
        self.ids.append(way_id[keep])
        self.lengths.append(way_nrefs[keep])
        self.refs.append(refs[np.repeat(keep, way_nrefs)])
        self.combo_of.append(combo_of[keep])

    def _value(self, s: bytes) -> int:
        v = self.values.get(s)
        if v is None:
            v = self.values[s] = len(self.value_text)
            self.value_text.append(s.decode("utf-8", "replace"))
        return v

    def _combinations(self, raw, str_start, str_end, distinct: np.ndarray) -> np.ndarray:
        """Global combination id of each distinct row of a block (string indices of the
        block's table); a new combination gets its profile."""
        used = np.unique(distinct[distinct >= 0])
        global_of = np.full(str_start.size, -1, np.int64)
        data = raw.data
        for i in used.tolist():
            global_of[i] = self._value(bytes(data[str_start[i]:str_end[i]]))
        rows = np.where(distinct >= 0, global_of[np.maximum(distinct, 0)], -1)
        ids = np.empty(rows.shape[0], np.int32)
        for i, row in enumerate(rows):
            k = row.tobytes()
            c = self.combos.get(k)
            if c is None:
                c = self.combos[k] = len(self.profiles)
                tags = {key: self.value_text[v] for key, v in zip(WAY_KEYS, row.tolist())
                        if v >= 0}
                self.profiles.append(way_profile(tags))
                self._kept = np.r_[self._kept, self.profiles[-1] is not None]
            ids[i] = c
        return ids


def _way_tags(block):
    """On a worker thread: (candidate ways, their distinct tag rows, each candidate's
    row) of a decoded block, the rows in the block's string indices (a table that
    repeats a string gives two rows for one combination: they meet again in
    PbfWays.combos, keyed by global value ids)."""
    (raw, meta, counts, str_start, str_end, node_id, node_x, node_y, way_id, way_nrefs,
     refs, way_ntags, way_k, way_v) = block[:14]
    if not way_id.size:
        return block + (None,)
    slot = key_slots(raw, str_start, str_end, _KEY_BLOB, _KEY_FIRST)
    rows, _ = way_rows(way_ntags, way_k, way_v, slot, len(WAY_KEYS))
    candidate, first, inv = distinct_rows(rows, _HIGHWAY, _ROUTE)   # KeyFilter highway/route
    return block + ((candidate, rows[candidate[first]], inv),)


def _restrictions(strings, rel_id, rel_nmembers, member_id, member_role, member_type,
                  rel_ntags, rel_k, rel_v, report: OsmReport) -> list:
    """read_restriction of every relation tagged type=restriction (TagFilter)."""
    try:
        k, v = strings.index(b"type"), strings.index(b"restriction")
    except ValueError:
        return []
    owner = np.repeat(np.arange(rel_id.size), rel_ntags)
    chosen = np.unique(owner[(rel_k == k) & (rel_v == v)])
    if chosen.size == 0:
        return []
    if np.any(member_type > 2) or np.any(member_type < 0):
        raise Damaged("a relation member of unknown type")
    text = [s.decode("utf-8", "replace") for s in strings]
    tag_first = np.r_[0, np.cumsum(rel_ntags)]
    mem_first = np.r_[0, np.cumsum(rel_nmembers)]
    out = []
    for r in chosen.tolist():
        tags = _Tags(Tag(text[a], text[b]) for a, b in
                     zip(rel_k[tag_first[r]:tag_first[r + 1]].tolist(),
                         rel_v[tag_first[r]:tag_first[r + 1]].tolist()))
        span = slice(mem_first[r], mem_first[r + 1])
        members = [Member(_MEMBER_TYPE[t], i, text[role]) for t, i, role in
                   zip(member_type[span].tolist(), member_id[span].tolist(),
                       member_role[span].tolist())]
        got = read_restriction(Relation(tags, members), report)
        if got is not None:
            out.append(got)
    return out


def read_pbf(path, report: OsmReport, cancel, on_bytes=None, threads=None):
    """The kept ways, node refs and locations, profiles and restrictions
    (osm_graph.WaysRead), as engine.io.osm's libosmium reader returns them; raises
    pbf_file.Unsupported or pbf_file.Damaged."""
    ways = PbfWays()
    node_parts, restrictions = [], []
    budget, held = memory_budget(), 0
    for block in data_blocks(path, threads, on_bytes, prepare=_way_tags):
        cancel.check()
        (raw, meta, counts, str_start, str_end, node_id, node_x, node_y, way_id, way_nrefs,
         refs, way_ntags, way_k, way_v, rel_id, rel_nmembers, member_id, member_role,
         member_type, rel_ntags, rel_k, rel_v, tags) = block
        if node_id.size:
            node_parts.append((node_id, node_x, node_y))
        if way_id.size:
            ways.add_block(raw, str_start, str_end, way_id, way_nrefs, refs, tags, report)
        # what the blocks read so far hold: 16 bytes per node, 8 per kept ref, 16 per way
        held += 16 * node_id.size + 8 * ways.refs[-1].size + 16 * ways.ids[-1].size \
            if way_id.size else 16 * node_id.size
        if held > budget:
            raise over_budget(path, "reading the file's nodes and ways", held, budget, more=True)
        if rel_id.size:
            data = raw.data   # the decompressed bytes
            strings = [bytes(data[a:b]) for a, b in zip(str_start.tolist(), str_end.tolist())]
            restrictions += _restrictions(strings, rel_id, rel_nmembers, member_id,
                                          member_role, member_type, rel_ntags, rel_k,
                                          rel_v, report)
    cancel.check()
    refs = _concat(ways.refs, np.int64)
    ways.refs = None
    unique_ids, ref_u, xy = _index_refs(refs, *_node_table(node_parts))
    del refs
    prof_table = np.array([p if p is not None else (0,) * 10 for p in ways.profiles],
                          np.float64).reshape(-1, 10)
    return WaysRead(_concat(ways.ids, np.int64), _concat(ways.lengths, np.int64),
                    ref_u, unique_ids, xy, prof_table, _concat(ways.combo_of, np.int32),
                    restrictions)


def _concat(parts, dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def _node_table(node_parts):
    """(ids, x, y) of every node of the file, sorted by id; of an id given twice, the
    last location counts (as in libosmium's location index)."""
    ids = _concat([p[0] for p in node_parts], np.int64)
    xs = _concat([p[1] for p in node_parts], np.int32)
    ys = _concat([p[2] for p in node_parts], np.int32)
    node_parts.clear()
    if ids.size > 1 and not np.all(ids[1:] > ids[:-1]):   # not sorted: sort, last wins
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        last = np.r_[ids[1:] != ids[:-1], True]
        order = order[last]
        ids, xs, ys = ids[last], xs[order], ys[order]
    return ids, xs, ys


def _index_refs(refs, ids, xs, ys):
    """(unique_ids, ref_u, xy) = np.unique(refs, return_inverse=True) and the [k, 2]
    int32 fixed-point locations of unique_ids (INVALID_COORD where the file has no
    such node). Where node ids are compact (generated files, renumbered extracts) an
    id -> row table replaces the sort of all refs."""
    if ids.size and refs.size and ids[-1] - ids[0] < 2 * ids.size + (1 << 20):
        got = compact_index(refs, ids, xs, ys)   # parallel Numba (engine.io.pbf_ref_index)
        if got is not None:   # every ref is a node of the file
            return got
    unique_ids, ref_u = np.unique(refs, return_inverse=True)
    xy = np.full((unique_ids.size, 2), INVALID_COORD, np.int32)
    if ids.size:
        pos = np.minimum(np.searchsorted(ids, unique_ids), ids.size - 1)
        found = ids[pos] == unique_ids
        xy[found, 0] = xs[pos[found]]
        xy[found, 1] = ys[pos[found]]
    return unique_ids, ref_u.reshape(-1).astype(np.int64), xy
