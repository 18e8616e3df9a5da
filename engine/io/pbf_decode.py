"""Decoding one OSM PBF data block (a PrimitiveBlock) into flat arrays, in Numba.

The PBF format (https://wiki.openstreetmap.org/wiki/PBF_Format) stores OSM data as
protobuf messages in independently compressed blocks; engine.io.pbf_file finds and
decompresses them. A block holds a string table and groups of nodes (plain or
"dense"), ways and relations. ``decode_block`` walks the protobuf twice, counting
then filling, and returns every node's id and fixed-point location, every way's id,
node refs and tag string indices, and every relation's id, tags and members: no
Python object per OSM object. Node tags and all metadata (version, user, ...) are
skipped.

Every read is bounds-checked: a damaged block raises ValueError (the caller turns it
into a LoadError), never reads outside the buffer. Fields this reader does not know
are skipped by wire type, as protobuf requires; a repeated field written unpacked
raises ``Unpacked`` (valid protobuf that no PBF writer emits; the caller then reads the
file with libosmium instead).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["decode_block", "BLOCK_META", "COUNTS"]

# decode_block's ``meta``: granularity, lat_offset, lon_offset (PrimitiveBlock fields
# 17, 19, 20: coordinate = 1e-9 * (offset + granularity * value)), and whether some
# repeated field was written unpacked.
BLOCK_META = ("granularity", "lat_offset", "lon_offset", "unpacked")
# The counts of the first pass, in order.
COUNTS = ("strings", "nodes", "ways", "refs", "way_tags", "relations", "members", "rel_tags")
_STRINGS, _NODES, _WAYS, _REFS, _WAY_TAGS, _RELS, _MEMBERS, _REL_TAGS = range(8)

_U1 = np.uint64(1)
_U7F = np.uint64(0x7F)


@numba.njit(cache=True, nogil=True)
def _varint(buf, pos, end):
    """(value as int64 two's complement, next position) of the varint at ``pos``."""
    result = np.uint64(0)
    shift = np.uint64(0)
    while True:
        if pos >= end or shift > np.uint64(63):
            raise ValueError("truncated or overlong varint")
        b = np.uint64(buf[pos])
        pos += 1
        result |= (b & _U7F) << shift
        if b < np.uint64(0x80):
            return np.int64(result), pos
        shift += np.uint64(7)


@numba.njit(cache=True, nogil=True)
def _zigzag(v):
    """sint64 of a zigzag-encoded varint (v as two's complement int64)."""
    u = np.uint64(v)
    return np.int64(u >> _U1) ^ -np.int64(u & _U1)


@numba.njit(cache=True, nogil=True)
def _field(buf, pos, end):
    """(field number, wire type, value or payload start, payload end, next position).

    Varints give their value; length-delimited fields give their payload range;
    fixed 32/64-bit fields are skipped (no PBF field of interest uses them)."""
    key, pos = _varint(buf, pos, end)
    number, wire = key >> 3, key & 7
    if wire == 0:
        value, pos = _varint(buf, pos, end)
        return number, wire, value, pos, pos
    if wire == 2:
        length, pos = _varint(buf, pos, end)
        if length < 0 or length > end - pos:
            raise ValueError("length-delimited field runs past its message")
        return number, wire, pos, pos + length, pos + length
    if wire == 1 or wire == 5:
        size = 8 if wire == 1 else 4
        if size > end - pos:
            raise ValueError("fixed-size field runs past its message")
        return number, wire, 0, pos + size, pos + size
    raise ValueError("unknown protobuf wire type")


@numba.njit(cache=True, nogil=True)
def _packed_count(buf, start, end):
    """Number of varints in a packed field's payload (bytes that end a varint)."""
    n = 0
    for i in range(start, end):
        if buf[i] < 0x80:
            n += 1
    if end > start and buf[end - 1] >= 0x80:
        raise ValueError("packed field ends inside a varint")
    return n


@numba.njit(cache=True, nogil=True)
def _unpack(buf, start, end, out, at, zigzag, delta):
    """Decode a packed field into out[at:]; returns the next free index."""
    pos = start
    last = np.int64(0)
    while pos < end:
        v, pos = _varint(buf, pos, end)
        if zigzag:
            v = _zigzag(v)
        if delta:
            last += v
            v = last
        out[at] = v
        at += 1
    return at


@numba.njit(cache=True, nogil=True)
def _block_fields(buf):
    """The PrimitiveBlock's own fields: (meta, string table range, group ranges)."""
    n = buf.size
    meta = np.zeros(4, np.int64)
    meta[0] = 100     # granularity's default (nanodegrees)
    table = np.zeros(2, np.int64)
    groups = np.zeros((0, 2), np.int64)
    for rnd in range(2):   # count the groups, then record them
        pos, g = 0, 0
        while pos < n:
            number, wire, a, b, pos = _field(buf, pos, n)
            if wire == 2 and number == 1:
                table[0], table[1] = a, b
            elif wire == 2 and number == 2:
                if rnd == 1:
                    groups[g, 0], groups[g, 1] = a, b
                g += 1
            elif wire == 0 and number == 17:
                meta[0] = a
            elif wire == 0 and number == 19:
                meta[1] = a
            elif wire == 0 and number == 20:
                meta[2] = a
        if rnd == 0:
            groups = np.zeros((g, 2), np.int64)
    return meta, table, groups


@numba.njit(cache=True, nogil=True)
def _count_object(buf, a, b, kind, counts, meta):
    """Add one Way (kind 3) or Relation (kind 4) message's sizes to ``counts``."""
    pos = a
    while pos < b:
        number, wire, s, e, pos = _field(buf, pos, b)
        if wire != 2:
            if wire == 0 and number >= 2 and number != 4:
                meta[3] = 1   # a repeated field written unpacked
            continue
        if number == 2:
            counts[_WAY_TAGS if kind == 3 else _REL_TAGS] += _packed_count(buf, s, e)
        elif number == 8 and kind == 3:
            counts[_REFS] += _packed_count(buf, s, e)
        elif number == 9 and kind == 4:
            counts[_MEMBERS] += _packed_count(buf, s, e)
    counts[_WAYS if kind == 3 else _RELS] += 1


@numba.njit(cache=True, nogil=True)
def _count(buf, table, groups, meta):
    """First pass: how many strings, nodes, ways, refs, ... the block holds."""
    counts = np.zeros(8, np.int64)
    pos = table[0]
    while pos < table[1]:
        number, wire, s, e, pos = _field(buf, pos, table[1])
        if number == 1 and wire == 2:
            counts[_STRINGS] += 1
    for g in range(groups.shape[0]):
        pos, end = groups[g, 0], groups[g, 1]
        while pos < end:
            number, wire, a, b, pos = _field(buf, pos, end)
            if wire != 2:
                continue
            if number == 1:
                counts[_NODES] += 1
            elif number == 2:   # DenseNodes: as many nodes as ids
                p = a
                while p < b:
                    f, w, s, e, p = _field(buf, p, b)
                    if f == 1 and w == 2:
                        counts[_NODES] += _packed_count(buf, s, e)
                    elif w == 0 and (f == 1 or f == 8 or f == 9):
                        meta[3] = 1
            elif number == 3 or number == 4:
                _count_object(buf, a, b, number, counts, meta)
    return counts


@numba.njit(cache=True, nogil=True)
def _fixed(v, gran, offset):
    """libosmium's fixed-point coordinate (1e-7 degrees) of a PBF value."""
    return (offset + gran * v) // 100   # exact: the caller checks divisibility by 100


@numba.njit(cache=True, nogil=True)
def _dense(buf, a, b, meta, node_id, node_x, node_y, at):
    """Fill the nodes of one DenseNodes message (ids and coordinates delta-coded)."""
    i0 = i1 = y0 = y1 = x0 = x1 = -1
    pos = a
    while pos < b:
        number, wire, s, e, pos = _field(buf, pos, b)
        if wire == 2 and number == 1:
            i0, i1 = s, e
        elif wire == 2 and number == 8:
            y0, y1 = s, e
        elif wire == 2 and number == 9:
            x0, x1 = s, e
    if i0 < 0:
        return at
    n = _unpack(buf, i0, i1, node_id, at, True, True) - at   # counted by _count
    if y0 < 0 or x0 < 0:
        raise ValueError("dense nodes without latitudes or longitudes")
    _coordinates(buf, x0, x1, node_x, at, n, meta[0], meta[2])
    _coordinates(buf, y0, y1, node_y, at, n, meta[0], meta[1])
    return at + n


@numba.njit(cache=True, nogil=True)
def _coordinates(buf, start, end, out, at, n, gran, offset):
    """Decode n delta-coded coordinates into out[at:at + n] as libosmium's fixed
    point; the field must hold exactly n (checked before any write past them)."""
    pos = start
    last = np.int64(0)
    for i in range(n):
        if pos >= end:
            raise ValueError("dense nodes: fewer coordinates than ids")
        v, pos = _varint(buf, pos, end)
        last += _zigzag(v)
        out[at + i] = _fixed(last, gran, offset)
    if pos != end:
        raise ValueError("dense nodes: more coordinates than ids")


@numba.njit(cache=True, nogil=True)
def _node(buf, a, b, meta, node_id, node_x, node_y, at):
    """Fill one plain Node message (id, lat and lon are zigzag varints)."""
    pos = a
    nid = lat = lon = np.int64(0)
    while pos < b:
        number, wire, v, e, pos = _field(buf, pos, b)
        if wire == 0 and number == 1:
            nid = _zigzag(v)
        elif wire == 0 and number == 8:
            lat = _zigzag(v)
        elif wire == 0 and number == 9:
            lon = _zigzag(v)
    node_id[at] = nid
    node_x[at] = _fixed(lon, meta[0], meta[2])
    node_y[at] = _fixed(lat, meta[0], meta[1])
    return at + 1


@numba.njit(cache=True, nogil=True)
def _object(buf, a, b, kind, obj_id, nlist, ntag, tag_k, tag_v, lst, roles, types, at):
    """Fill one Way (kind 3: node refs) or Relation (kind 4: member ids, roles,
    types) message. ``at`` = (object, tag, list entry) cursors; returns them advanced."""
    o, t, m = at[0], at[1], at[2]
    pos = a
    nk = nv = nl = nr = nt = 0
    while pos < b:
        number, wire, s, e, pos = _field(buf, pos, b)
        if wire == 0 and number == 1:
            obj_id[o] = s
        elif wire != 2:
            continue
        elif number == 2:
            nk = _unpack(buf, s, e, tag_k, t, False, False) - t
        elif number == 3:
            nv = _unpack(buf, s, e, tag_v, t, False, False) - t
        elif number == 8 and kind == 3:
            nl = _unpack(buf, s, e, lst, m, True, True) - m
        elif number == 8:
            nr = _unpack(buf, s, e, roles, m, False, False) - m
        elif number == 9 and kind == 4:
            nl = _unpack(buf, s, e, lst, m, True, True) - m
        elif number == 10 and kind == 4:
            nt = _unpack(buf, s, e, types, m, False, False) - m
    if nk != nv:
        raise ValueError("an object's tag keys and values differ in number")
    if kind == 4 and (nr != nl or nt != nl):
        raise ValueError("a relation's member ids, roles and types differ in number")
    nlist[o], ntag[o] = nl, nk
    at[0], at[1], at[2] = o + 1, t + nk, m + nl


@numba.njit(cache=True, nogil=True)
def decode_block(buf):
    """Every string, node, way and relation of one decompressed PrimitiveBlock.

    Returns (meta, counts, str_start, str_end, node_id, node_x, node_y, way_id,
    way_nrefs, refs, way_ntags, way_k, way_v, rel_id, rel_nmembers, member_id,
    member_role, member_type, rel_ntags, rel_k, rel_v). Coordinates are libosmium's
    fixed point (1e-7 degrees, x = lon); tag keys, values and member roles are indices
    into the block's string table (checked against its size); member types are
    0 node, 1 way, 2 relation. Nothing is filled when ``meta[3]`` (unpacked fields)
    is set."""
    meta, table, groups = _block_fields(buf)
    counts = _count(buf, table, groups, meta)
    if meta[3]:
        counts[:] = 0
    str_start = np.empty(counts[_STRINGS], np.int64)
    str_end = np.empty(counts[_STRINGS], np.int64)
    node_id = np.empty(counts[_NODES], np.int64)
    node_x = np.empty(counts[_NODES], np.int32)
    node_y = np.empty(counts[_NODES], np.int32)
    way_id = np.empty(counts[_WAYS], np.int64)
    way_nrefs = np.empty(counts[_WAYS], np.int32)
    way_ntags = np.empty(counts[_WAYS], np.int32)
    refs = np.empty(counts[_REFS], np.int64)
    way_k = np.empty(counts[_WAY_TAGS], np.int32)
    way_v = np.empty(counts[_WAY_TAGS], np.int32)
    rel_id = np.empty(counts[_RELS], np.int64)
    rel_nmembers = np.empty(counts[_RELS], np.int32)
    rel_ntags = np.empty(counts[_RELS], np.int32)
    member_id = np.empty(counts[_MEMBERS], np.int64)
    member_role = np.empty(counts[_MEMBERS], np.int32)
    member_type = np.empty(counts[_MEMBERS], np.int8)
    rel_k = np.empty(counts[_REL_TAGS], np.int32)
    rel_v = np.empty(counts[_REL_TAGS], np.int32)
    if not meta[3]:
        _strings(buf, table, str_start, str_end)
        nodes = 0
        way_at = np.zeros(3, np.int64)
        rel_at = np.zeros(3, np.int64)
        for g in range(groups.shape[0]):
            pos, end = groups[g, 0], groups[g, 1]
            while pos < end:
                number, wire, a, b, pos = _field(buf, pos, end)
                if wire != 2:
                    continue
                if number == 1:
                    nodes = _node(buf, a, b, meta, node_id, node_x, node_y, nodes)
                elif number == 2:
                    nodes = _dense(buf, a, b, meta, node_id, node_x, node_y, nodes)
                elif number == 3:
                    _object(buf, a, b, 3, way_id, way_nrefs, way_ntags, way_k, way_v, refs,
                            member_role, member_type, way_at)
                elif number == 4:
                    _object(buf, a, b, 4, rel_id, rel_nmembers, rel_ntags, rel_k, rel_v,
                            member_id, member_role, member_type, rel_at)
        _check_strings(counts[_STRINGS], way_k, way_v, rel_k, rel_v, member_role)
    return (meta, counts, str_start, str_end, node_id, node_x, node_y, way_id, way_nrefs,
            refs, way_ntags, way_k, way_v, rel_id, rel_nmembers, member_id, member_role,
            member_type, rel_ntags, rel_k, rel_v)


@numba.njit(cache=True, nogil=True)
def _strings(buf, table, start, end):
    """Byte ranges of the string table's entries."""
    pos, i = table[0], 0
    while pos < table[1]:
        number, wire, s, e, pos = _field(buf, pos, table[1])
        if number == 1 and wire == 2:
            start[i], end[i] = s, e
            i += 1


@numba.njit(cache=True, nogil=True)
def _check_strings(n, *indices):
    """Every string index is inside the table (no index from a file used unchecked)."""
    for arr in indices:
        for v in arr:
            if v < 0 or v >= n:
                raise ValueError("a string index points outside the block's string table")
