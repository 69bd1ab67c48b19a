"""Tar archives read in one forward pass, without extracting anything: the streams that
SuiteSparse archives (:func:`dynpr.io.readers.read_suitesparse_tar`) and download checks
(:mod:`dynpr.io.download`) read, with every member checked before it is read.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import tarfile
from pathlib import Path

from dynpr.errors import ParseError


def archive_stem(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


#: Read size of the archive stream (tarfile's default, 10 KiB, costs a Python call per 10 KiB).
_TAR_BUFSIZE = 1 << 20


def check_member(path: Path, member: tarfile.TarInfo) -> None:
    """Refuse an absolute path, ``..`` traversal or a link leaving the folder (tarfile's ``data`` filter)."""
    try:
        # the data filter would silently strip a leading "/"; refuse instead
        if member.name.startswith("/"):
            raise tarfile.AbsolutePathError(member)
        tarfile.data_filter(member, ".")
    except tarfile.FilterError as err:
        raise ParseError(f"{path}: unsafe archive member {member.name!r} ({err}); refusing to read it") from None


#: leading bytes of the compressed streams an archive may come in, and the reader inflating each
_COMPRESSED = ((b"\x1f\x8b", lambda fh: gzip.GzipFile(fileobj=fh)), (b"BZh", bz2.BZ2File),
               (b"\xfd7zXZ\x00", lzma.LZMAFile))


@contextlib.contextmanager
def open_tar_stream(path: str | Path):
    """A tar archive (plain, ``.gz``, ``.bz2`` or ``.xz``) opened for one forward pass, in stream mode.

    The archive is inflated by the compression module's own reader, in pieces of the
    read size: tarfile's ``r|*`` inflates each compressed read whole and copies what
    is left of it on every read, which takes time quadratic in a highly compressed
    member (hours for a few MB declaring GBs).
    """
    with open(path, "rb") as raw:
        head = raw.read(6)
        raw.seek(0)
        opener = next((open_ for magic, open_ in _COMPRESSED if head.startswith(magic)), None)
        with contextlib.ExitStack() as stack:
            stream = stack.enter_context(opener(raw)) if opener is not None else raw
            yield stack.enter_context(tarfile.open(fileobj=_PieceReader(stream), mode="r|", bufsize=_TAR_BUFSIZE))


class _PieceReader:
    """What is there of a stream at each read (``read1``), as tarfile's stream mode expects: a full
    ``read`` would first inflate a whole piece past a truncation, failing before the member it cuts."""

    def __init__(self, stream):
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        return self.stream.read1(size) if size > 0 else self.stream.read()


class _ForwardOnly(io.RawIOBase):
    """A member of a tar read in stream mode, for readers that ask whether it can seek (pandas 2
    wraps binary handles in ``TextIOWrapper``, which asks): tarfile's own member object raises
    ``AttributeError`` there instead of answering no (CPython issue 124293)."""

    def __init__(self, member):
        self.member = member

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer) -> int:
        return self.member.readinto(buffer)


@contextlib.contextmanager
def tar_member_stream(path: Path, name: str, tar: tarfile.TarFile | None = None, member=None):
    """A binary stream of member ``name`` of the archive, gunzipped if it is ``.mtx.gz``.

    With ``tar``/``member`` the member the caller's stream is at; otherwise a new
    streaming pass over the archive up to that member.
    """
    with contextlib.ExitStack() as stack:
        if tar is None:
            tar = stack.enter_context(open_tar_stream(path))
            member = next(m for m in tar if m.name == name)
        raw = stack.enter_context(tar.extractfile(member))
        if raw.peek(2)[:2] == b"\x1f\x8b":
            yield stack.enter_context(gzip.GzipFile(fileobj=raw))
        else:
            yield stack.enter_context(io.BufferedReader(_ForwardOnly(raw), _TAR_BUFSIZE))
