"""``.npz`` members as read-only memory maps: a prepared graph is read without a copy.

``np.load`` of an ``.npz`` reads every member into fresh memory, so a job holding a
10 GB graph allocated 10 GB before its first check, and a second copy whenever a
reader cast or sliced it. ``np.savez`` stores members uncompressed (``ZIP_STORED``);
such a member's array is a contiguous run of bytes in the file, which
:func:`load_members` maps with :class:`numpy.memmap`. Pages come in as they are read
and belong to the page cache: jobs reading the same graph share them, and the
kernel can drop them under pressure. Compressed members (``np.savez_compressed``)
are read into memory as before.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import numpy as np

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # zip local file header, 30 bytes
_LOCAL_MAGIC = b"PK\x03\x04"
_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
_PICKLED = "member {}: holds Python objects (pickled data), which are never loaded"
#: Members smaller than this are read into memory (scalars, parameters): a map costs a file handle.
MAP_MIN_BYTES = 1 << 20


def _data_offset(fh, info: zipfile.ZipInfo) -> int:
    """Offset in the file of a member's first data byte (after its local header)."""
    fh.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
    if fields[0] != _LOCAL_MAGIC:
        raise zipfile.BadZipFile(f"member {info.filename}: no local header at offset {info.header_offset}")
    name_length, extra_length = fields[-2], fields[-1]
    return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _mapped(path: Path, fh, info: zipfile.ZipInfo) -> np.ndarray:
    """A stored ``.npy`` member as a read-only memory map (its header parsed by NumPy's own reader)."""
    start = _data_offset(fh, info)
    fh.seek(start)
    version = np.lib.format.read_magic(fh)
    if version not in _HEADER_READERS:
        raise ValueError(f"member {info.filename}: .npy format version {version} is not supported")
    shape, fortran, dtype = _HEADER_READERS[version](fh)
    if dtype.hasobject:
        raise ValueError(_PICKLED.format(info.filename))
    offset = fh.tell()
    count = int(np.prod(shape, dtype=np.int64))
    if offset + count * dtype.itemsize > start + info.file_size:
        raise EOFError(f"member {info.filename}: its header declares {count} x {dtype} values, "
                       f"more than the {info.file_size} bytes stored")
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")


def load_members(path: str | Path) -> dict[str, np.ndarray]:
    """Every array of an ``.npz``: stored members memory-mapped read-only, compressed ones read.

    Names lose their ``.npy`` suffix, as with ``np.load``. Pickled (object) members
    raise ``ValueError`` mentioning ``pickled``, as ``np.load(allow_pickle=False)`` does.

    Raises
    ------
    zipfile.BadZipFile, EOFError, ValueError, OSError
        For a file that is not a readable ``.npz`` (callers word these for the user).
    """
    path = Path(path)
    arrays = {}
    with zipfile.ZipFile(path) as archive, open(path, "rb") as fh:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if info.compress_type == zipfile.ZIP_STORED and info.file_size >= MAP_MIN_BYTES:
                arrays[name] = _mapped(path, fh, info)
            else:
                with archive.open(info) as member:
                    try:
                        arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
                    except ValueError as err:
                        if "allow_pickle" not in str(err):
                            raise
                        raise ValueError(_PICKLED.format(info.filename)) from None
    return arrays
