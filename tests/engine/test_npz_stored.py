"""engine.io.npz_stored reads an uncompressed .npz straight into its arrays, in parallel:
the same arrays as np.load (any dtype, byte order, memory order, empty ones), and a
damaged file (a flipped data byte, a cut-off end, an object array) is refused as
engine.io.npz.read_npz refuses it; a compressed archive goes through read_npz."""
from __future__ import annotations

import numpy as np
import pytest

from engine.io import LoadError
from engine.io.npz_stored import read_stored_npz

ARRAYS = {"a": np.arange(100_000, dtype=np.int32), "b": np.linspace(0, 1, 777),
          "empty": np.zeros(0, np.int64), "flags": np.arange(10) % 3 == 0,
          "big_endian": np.arange(5, dtype=">i8"),
          "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
          "pairs": np.arange(20, dtype=np.float64).reshape(10, 2)}


def write(path, compressed=False, **arrays):
    (np.savez_compressed if compressed else np.savez)(path, **(arrays or ARRAYS))
    return path


def test_the_arrays_are_those_np_load_gives(tmp_path):
    got = read_stored_npz(write(tmp_path / "x.npz"), "test file")
    assert list(got) == list(ARRAYS)
    for name, want in ARRAYS.items():
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        assert np.array_equal(got[name], want), name


def test_a_compressed_archive_is_read_too(tmp_path):
    got = read_stored_npz(write(tmp_path / "z.npz", compressed=True), "test file")
    assert all(np.array_equal(got[k], v) for k, v in ARRAYS.items())


def test_a_flipped_data_byte_fails_the_crc(tmp_path):
    path = write(tmp_path / "x.npz")
    data = bytearray(path.read_bytes())
    at = data.find(np.arange(50_000, 50_004, dtype=np.int32).tobytes())
    data[at] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(LoadError, match="member 'a.npy' fails its CRC check"):
        read_stored_npz(path, "test file")


def test_a_cut_off_file_is_refused(tmp_path):
    path = write(tmp_path / "x.npz")
    path.write_bytes(path.read_bytes()[:-5000])
    with pytest.raises(LoadError, match="not a readable test file"):
        read_stored_npz(path, "test file")


def test_object_arrays_are_never_read(tmp_path):
    path = tmp_path / "o.npz"
    np.savez(path, o=np.array([{"x": 1}], dtype=object))
    with pytest.raises(LoadError, match="holds Python objects"):
        read_stored_npz(path, "test file")


def test_the_budget_is_checked_first(tmp_path, monkeypatch):
    path = write(tmp_path / "x.npz")
    monkeypatch.setenv("ROUTELAB_MEMORY_BUDGET", "100K")
    with pytest.raises(LoadError, match="needs .* GiB, budget"):
        read_stored_npz(path, "test file")
