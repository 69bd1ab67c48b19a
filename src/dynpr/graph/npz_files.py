"""``.npz`` members as read-only memory maps: a prepared graph is read without a copy.

``np.load`` of an ``.npz`` reads every member into fresh memory, so a job holding a
10 GB graph allocated 10 GB before its first check, and a second copy whenever a
reader cast or sliced it. ``np.savez`` stores members uncompressed (``ZIP_STORED``);
such a member's array is a contiguous run of bytes in the file, which
:func:`load_members` maps with :class:`numpy.memmap`. Pages come in as they are read
and belong to the page cache: jobs reading the same graph share them, and the
kernel can drop them under pressure. Compressed members (``np.savez_compressed``)
are read into memory as before.

A mapped page stays in the process's resident set once read. A job that reads a
graph once (to check it, hash it or upload it to the device) gives each part's pages
back as it finishes with them (:func:`release_pages`, :func:`chunks`), so its peak
holds a part of the graph, not all of it; the pages stay in the page cache.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import os
import signal
import struct
import weakref
import zipfile
from pathlib import Path

import numpy as np

from dynpr.errors import EXIT_INPUT, InputError
from dynpr.graph.atomic_files import remove_live_temporaries
from dynpr.graph.hostmem import check_host_fits

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # zip local file header, 30 bytes
_LOCAL_MAGIC = b"PK\x03\x04"
_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
_PICKLED = "member {}: holds Python objects (pickled data), which are never loaded"
#: Members smaller than this are read into memory (scalars, parameters): a map costs a file handle.
MAP_MIN_BYTES = 1 << 20
#: Bytes per part of :func:`chunks`: large enough that a part costs one system call among many pages.
CHUNK_BYTES = 64 << 20
_MADVISE = getattr(ctypes.CDLL(None, use_errno=True), "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None


def release_pages(array: np.ndarray) -> None:
    """Drop the pages of a read-only memory-mapped array from this process's resident set.

    The data stays in the file and the page cache: reading the array again faults its
    pages back in, with no disk access unless the kernel reclaimed them meanwhile. Only
    whole pages inside the array are dropped. Anything but a read-only map (a view of
    one included) is left alone: for memory of the process itself, dropping pages would
    lose their contents.
    """
    owner = array
    while isinstance(owner.base, np.ndarray):  # the array that owns the memory of a view
        owner = owner.base
    if _MADVISE is None or not isinstance(owner, np.memmap) or owner.mode != "r" or not array.nbytes:
        return
    start = array.ctypes.data
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    end = (start + array.nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        _MADVISE(ctypes.c_void_p(first), ctypes.c_size_t(end - first), mmap.MADV_DONTNEED)


def chunks(array: np.ndarray, chunk_bytes: int = CHUNK_BYTES):
    """Consecutive slices of a 1-D array of about ``chunk_bytes`` each; a mapped array's
    pages are released (:func:`release_pages`) as the caller moves past each slice."""
    step = max(1, chunk_bytes // max(array.itemsize, 1))
    for lo in range(0, len(array), step):
        part = array[lo:lo + step]
        yield part
        release_pages(part)


def _data_offset(fh, info: zipfile.ZipInfo) -> int:
    """Offset in the file of a member's first data byte (after its local header)."""
    fh.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
    if fields[0] != _LOCAL_MAGIC:
        raise zipfile.BadZipFile(f"member {info.filename}: no local header at offset {info.header_offset}")
    name_length, extra_length = fields[-2], fields[-1]
    return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _npy_header(fh, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) of the ``.npy`` array starting at ``fh``, by NumPy's own readers.

    Raises
    ------
    ValueError
        For an unknown ``.npy`` version or a header NumPy cannot parse; for an object dtype
        (pickled data), with :data:`_PICKLED`'s message.
    """
    version = np.lib.format.read_magic(fh)
    if version not in _HEADER_READERS:
        raise ValueError(f"member {name}: .npy format version {version} is not supported")
    shape, fortran, dtype = _HEADER_READERS[version](fh)
    if dtype.hasobject:
        raise ValueError(_PICKLED.format(name))
    return shape, fortran, dtype


#: The maps this process made that are still alive, with their file's identity and state when mapped.
_MAPS: list[tuple[weakref.ref, Path, tuple[int, int, int, int, int]]] = []


def _file_state(path: Path) -> tuple[int, int, int, int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def check_mapped_files_unchanged() -> None:
    """Refuse to report results computed on a mapped file that was changed in place meanwhile.

    A map reads the file as it is when each page comes in: a file rewritten in place (``rsync
    --inplace``, ``dd conv=notrunc``) while a run maps it is computed on half old, half new, after
    its checksum passed. Copying every graph into memory would double a large job's peak, and
    hashing it again costs as much as loading it; a write changes the file's ctime, which no user
    can set, so comparing one ``stat`` per mapped file before results are written tells, for
    microseconds. A file *replaced* (``os.replace``, ``rsync`` without ``--inplace``, ``dynpr``
    itself) has a new inode and leaves the mapped one intact: not refused. Truncating a mapped
    file makes reading a lost page a bus error, which no exception can catch:
    :func:`exit_on_bus_error` names the file and exits.

    Raises
    ------
    InputError
        ``<file>: changed on disk while this run read it ...``.
    """
    _MAPS[:] = [entry for entry in _MAPS if entry[0]() is not None]  # a file no array maps is no concern
    for _, path, state in _MAPS:
        try:
            now = _file_state(path)
        except FileNotFoundError:
            continue  # removed: the mapped inode lives on intact
        if now[:2] == state[:2] and now != state:
            raise InputError(f"{path}: changed on disk while this run read it (rewritten in place?); its results "
                             "are not reported: rerun once the file is complete")


#: The bus-error handler the C library calls (kept referenced: it must outlive the call that installs it).
_BUS_HANDLER = []


def _on_bus_error(signum: int) -> None:
    """Name the mapped files whose size changed (else every mapped one), remove this run's temporary
    files and exit 2, never returning (a return would run the faulting read again)."""
    try:
        alive = [(path, state) for ref, path, state in _MAPS if ref() is not None]
        cut = [path for path, state in alive if _size_now(path) != state[2]] or [path for path, _ in alive]
        names = ", ".join(dict.fromkeys(str(path) for path in cut)) or "a memory-mapped file"
        os.write(2, f"dynpr: error: {names}: cut short on disk while this run read it (bus error); nothing was "
                    "written: rerun once the file is complete\n".encode())
        remove_live_temporaries()
    finally:
        os._exit(EXIT_INPUT)


def _size_now(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def exit_on_bus_error() -> None:
    """Turn a bus error (SIGBUS) into one line naming the mapped file cut short, and exit 2.

    Truncating a file a run maps (``: > g.npz``, ``cp`` over it, ``truncate``) loses its pages: the
    next read of one is a SIGBUS in the middle of a NumPy or CUDA copy loop, where a Python signal
    handler never gets to run (it waits for the loop to end, which a fault never lets happen), and
    the process died with no message. This installs a C-level handler (through :mod:`ctypes`) that
    runs :func:`_on_bus_error` in the faulting thread: it stats the mapped files, writes one line,
    removes this run's temporary files (:func:`dynpr.graph.atomic_files.remove_live_temporaries`)
    and calls ``os._exit``. Running Python in a signal's context is safe only because nothing here
    touches the state the fault interrupted (a read of mapped memory, never the allocator); outputs
    are written under temporary names, so none is left half-written. For the CLI and the
    experiment jobs; a library user keeps their own handlers. POSIX only: elsewhere a no-op.
    """
    if not hasattr(signal, "SIGBUS") or _BUS_HANDLER:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    handler_type = ctypes.CFUNCTYPE(None, ctypes.c_int)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = (ctypes.c_int, handler_type)
    _BUS_HANDLER.append(handler_type(_on_bus_error))
    libc.signal(signal.SIGBUS, _BUS_HANDLER[0])


def _mapped(path: Path, fh, info: zipfile.ZipInfo) -> np.ndarray:
    """A stored ``.npy`` member as a read-only memory map (its header parsed by NumPy's own reader)."""
    state = _file_state(path)
    start = _data_offset(fh, info)
    fh.seek(start)
    shape, fortran, dtype = _npy_header(fh, info.filename)
    offset = fh.tell()
    count = int(np.prod(shape, dtype=np.int64))
    if offset + count * dtype.itemsize > start + info.file_size:
        raise EOFError(f"member {info.filename}: its header declares {count} x {dtype} values, "
                       f"more than the {info.file_size} bytes stored")
    array = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")
    _MAPS.append((weakref.ref(array), path.resolve(), state))
    return array


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


#: names of an .npz that must hold 1-D arrays of one length (graph files, batch files)
_SAME_LENGTH = (("offsets", "in_offsets"), ("targets", "sources"), ("temporal_src", "temporal_dst", "temporal_time"),
                ("del_src", "del_dst"), ("ins_src", "ins_dst"), ("del_ptr", "ins_ptr"))
#: pointer arrays whose last entry is the length of the arrays they point into (graph files, batch files)
_POINTS_INTO = (("offsets", ("targets",)), ("in_offsets", ("sources",)), ("del_ptr", ("del_src", "del_dst")),
                ("ins_ptr", ("ins_src", "ins_dst")))
#: zlib's deflate stores at most about 1032 bytes in one; a member claiming more is not a deflate stream
_DEFLATE_MAX_RATIO = 1032
#: A compressed pointer member is inflated (a part at a time) to read its last entry only up to this
#: size: a few seconds; beyond it the memory check decides. dynpr writes stored members, read at once.
_POINTER_INFLATE_MAX = 4 << 30
_INFLATE_PART = 256 << 10


def npz_headers(path: str | Path, what: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The shape and dtype every member of an ``.npz`` declares, read from the ``.npy`` headers only.

    Nothing array-sized is read or allocated: a file of a few MB declaring arrays of
    many GB is measured here, before :func:`read_npz` would inflate it. A member
    whose header disagrees with its stored size is refused.

    Raises
    ------
    InputError
        For a member that is not an ``.npy`` array, an unknown ``.npy`` version, a
        pickled (object) dtype, or a stored size other than the header's.
    """
    headers = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            with archive.open(info) as fh:
                try:
                    shape, _, dtype = _npy_header(fh, info.filename)
                except ValueError as err:
                    if str(err) == _PICKLED.format(info.filename):
                        raise InputError(f"{path}: not a {what}: it holds Python objects (pickled data), which "
                                         "dynpr never loads") from None
                    raise InputError(f"{path}: not a {what}: member {name!r} is not a NumPy array ({err})") from None
                declared = math.prod(shape) * dtype.itemsize
                stored = info.file_size - fh.tell()
            if info.compress_type == zipfile.ZIP_DEFLATED \
                    and info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + MAP_MIN_BYTES:
                raise InputError(f"{path}: not a {what}: member {name!r} claims {info.file_size:,} bytes from "
                                 f"{info.compress_size:,} compressed, more than deflate can hold; the file is "
                                 "corrupt (a zip bomb?)")
            if declared != stored:
                raise InputError(f"{path}: not a {what}: member {name!r} declares {dtype} {shape} ({declared:,} "
                                 f"bytes) but holds {stored:,} bytes; the file is corrupt")
            headers[name] = (tuple(shape), dtype)
    return headers


def check_npz_header(path: str | Path, what: str) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Bound what reading an ``.npz`` may allocate, before any array is read.

    Checks that the arrays whose lengths go together (``offsets``/``in_offsets``,
    ``targets``/``sources``, ``vertex_ids`` = one per vertex, the ``temporal_*``
    arrays, a batch file's ids and pointers) are 1-D and agree, that each pointer array
    (``offsets``, ``in_offsets``, ``del_ptr``, ``ins_ptr``) ends at the length of the arrays it
    points into (only its last entry read), and that all the declared arrays fit the host's
    available memory: nothing is inflated before these hold.

    Returns
    -------
    dict of str to (shape, dtype)
        :func:`npz_headers`.

    Raises
    ------
    InputError
        For lengths that disagree, pointers ending elsewhere, or arrays that are not 1-D (see also
        :func:`npz_headers`).
    MemoryError
        ``<path>: reading its arrays needs X GiB of host memory, Y GiB available``.
    """
    headers = npz_headers(path, what)
    for group in _SAME_LENGTH:
        present = [name for name in group if name in headers]
        shapes = [headers[name][0] for name in present]
        if any(len(shape) != 1 for shape in shapes) or len({shape for shape in shapes}) > 1:
            listed = ", ".join(f"{name} {headers[name][0]}" for name in present)
            raise InputError(f"{path}: not a {what}: {listed} must be 1-D arrays of one length")
    if "vertex_ids" in headers and "offsets" in headers \
            and headers["vertex_ids"][0] != (max(headers["offsets"][0][0] - 1, 0),):
        raise InputError(f"{path}: not a {what}: vertex_ids {headers['vertex_ids'][0]} must hold one id per vertex "
                         f"(offsets {headers['offsets'][0]})")
    _check_pointer_ends(path, what, headers)
    check_host_fits(sum(math.prod(shape) * dtype.itemsize for shape, dtype in headers.values()),
                    f"{path}: reading its arrays")
    return headers


def _check_pointer_ends(path, what: str, headers: dict) -> None:
    """Refuse arrays longer or shorter than their pointers say, reading only each pointer's last entry.

    A file of a few MB can declare GB of compressed members consistent with their own headers;
    only the pointers tell that a 4-entry ``offsets`` cannot point into a billion targets, and
    reading its last entry costs a seek (stored members) or inflating the pointer alone.
    """
    with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
        infos = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
        for pointer, pointed in _POINTS_INTO:
            present = [name for name in pointed if name in headers]
            if pointer not in headers or not present or not np.issubdtype(headers[pointer][1], np.integer):
                continue  # a missing array or a float pointer is named by the reader's own checks
            end = _last_entry(archive, raw, infos[pointer], *headers[pointer])
            for name in present:
                if end is not None and end != headers[name][0][0]:
                    raise InputError(f"{path}: not a {what}: {name} holds {headers[name][0][0]:,} entries, its "
                                     f"pointers {pointer} end at {end:,}; the file is corrupt")


def _last_entry(archive: zipfile.ZipFile, raw, info: zipfile.ZipInfo, shape, dtype: np.dtype) -> int | None:
    """The last value of a 1-D member, read without the rest; None when empty or too costly to inflate."""
    nbytes = math.prod(shape) * dtype.itemsize
    if not nbytes:
        return None
    if info.compress_type == zipfile.ZIP_STORED:
        raw.seek(_data_offset(raw, info))
        _npy_header(raw, info.filename)
        raw.seek(nbytes - dtype.itemsize, 1)
        tail = raw.read(dtype.itemsize)
    elif nbytes > _POINTER_INFLATE_MAX:
        return None
    else:
        with archive.open(info) as fh:
            _npy_header(fh, info.filename)
            tail = b""
            while part := fh.read(_INFLATE_PART):  # a part at a time: memory stays at one part
                tail = (tail + part[-dtype.itemsize:])[-dtype.itemsize:]
    if len(tail) != dtype.itemsize:
        return None  # a short member: load_members names it
    return int(np.frombuffer(tail, dtype=dtype)[0])


def read_npz(path: str | Path, what: str) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file (large ones memory-mapped read-only,
    :func:`dynpr.graph.npz_files.load_members`), with one-line errors naming the file.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    InputError
        If it is a folder, not an ``.npz``, truncated, or holds pickled objects.
    """
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic[:2] != b"PK":  # np.load would try to unpickle it, and say so
            raise InputError(f"{path}: not a {what}: not an .npz (zip) file, it starts with {magic!r}")
        check_npz_header(path, what)  # before any array is read: nothing beyond what the file declares
        return load_members(path)  # large members memory-mapped: no copy of a graph before its checks
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a {what}") from None
    except NotADirectoryError:
        blocker = next((parent for parent in Path(path).parents if parent.is_file()), None)
        raise InputError(f"{path}: no such {what} ({blocker} is a file, not a folder)") from None
    except ValueError as err:
        if isinstance(err, InputError):
            raise
        if "pickled" in str(err):
            raise InputError(f"{path}: not a {what}: it holds Python objects (pickled data), which dynpr "
                             "never loads") from None
        raise InputError(f"{path}: not a {what} ({err})") from None
    except (OSError, EOFError, AttributeError, zipfile.BadZipFile) as err:  # truncated or corrupt zip
        raise InputError(f"{path}: not a {what}: truncated or corrupt ({type(err).__name__}: {err})") from None

