"""Memory-mapped .npz members: the same arrays as np.load, no copy, and the same refusals."""

import zipfile

import numpy as np
import pytest

from dynpr.npz_files import MAP_MIN_BYTES, load_members


def test_stored_members_are_mapped_and_equal_np_load(tmp_path):
    path = tmp_path / "a.npz"
    big = np.arange(MAP_MIN_BYTES // 8 + 5, dtype=np.int64)
    np.savez(path, big=big, small=np.arange(3, dtype=np.int32), text=np.asarray("x"), fortran=np.asfortranarray(
        np.arange(MAP_MIN_BYTES // 4, dtype=np.float32).reshape(2, -1)))
    got = load_members(path)
    with np.load(path) as expected:
        assert set(got) == set(expected.files)
        for name in expected.files:
            assert got[name].dtype == expected[name].dtype and np.array_equal(got[name], expected[name])
    assert isinstance(got["big"], np.memmap) and not got["big"].flags.writeable
    assert not isinstance(got["small"], np.memmap)  # small members are read: a map costs a file handle
    assert got["fortran"].flags.f_contiguous


def test_compressed_members_are_read(tmp_path):
    path = tmp_path / "c.npz"
    a = np.arange(MAP_MIN_BYTES, dtype=np.int64)
    np.savez_compressed(path, a=a)
    got = load_members(path)
    assert not isinstance(got["a"], np.memmap) and np.array_equal(got["a"], a)


def test_a_member_declaring_more_than_it_stores_is_refused(tmp_path):
    path = tmp_path / "lie.npz"
    np.savez(path, a=np.arange(MAP_MIN_BYTES // 8 + 1, dtype=np.int64))
    with zipfile.ZipFile(path) as archive:
        raw = archive.read("a.npy")
    header_end = raw.index(b"\n") + 1
    lying = raw[:header_end].replace(b"(131073,)", b"(931073,)") + raw[header_end:]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.npy", lying)
    with pytest.raises(EOFError, match="declares 931073"):
        load_members(path)


def test_pickled_members_are_refused(tmp_path):
    path = tmp_path / "p.npz"
    np.savez(path, a=np.array([{"x": 1}] * (MAP_MIN_BYTES // 8), dtype=object))
    with pytest.raises(ValueError, match="pickled"):
        load_members(path)
