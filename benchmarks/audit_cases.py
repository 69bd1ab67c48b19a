"""The inputs of the input audit (benchmarks/audit_inputs.py): builders, the shared base inputs, and
the cases of the input files (edge lists, Matrix Market, archives, prepared and batch .npz).
Each case is one command and what it should do; every input is built here, none is kept.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Case:
    name: str
    command: list[str]
    expect: str  # "ok", "input" (exit 2), "resource" (exit 1), "refuse" (either), "any" (ok or a refusal)
    names: tuple[str, ...] = ()  # a refusal's line must contain one of these
    check: Callable[[subprocess.CompletedProcess], str | None] | None = None  # a problem, None if fine
    outputs: tuple[str, ...] = ()  # files the command may write or replace
    cwd: Path | None = None
    upstream: str = ""  # where the behaviour is another tool's, before any dynpr code runs: at most WEAK




CASES: list[Case] = []


def case(name, command, expect, names=(), check=None, outputs=(), cwd=None, upstream=""):
    CASES.append(Case(name, [str(c) for c in command], expect, tuple(names), check, tuple(outputs), cwd, upstream))


def json_records(proc) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def vertices_are(n: int, edges: int | None = None):
    def check(proc):
        records = json_records(proc)
        if not records:
            return "no JSON record"
        got = (records[0]["vertices"], records[0]["edges"])
        if got[0] != n or (edges is not None and got[1] != edges):
            return f"vertices, edges {got}, expected {(n, edges)}"
        return None
    return check


# --------------------------------------------------------------------------- builders


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def gz(data: bytes | str) -> bytes:
    return gzip.compress(data.encode() if isinstance(data, str) else data, compresslevel=6)


def gzip_bomb(path: Path, piece: bytes, copies: int) -> Path:
    """Concatenated gzip members (a valid stream): ``copies`` x ``piece`` inflated, built in seconds."""
    member = gzip.compress(piece, compresslevel=9)
    with open(path, "wb") as fh:
        for _ in range(copies):
            fh.write(member)
    return path


def tar_gz(path: Path, members: list[tuple[str, bytes]], links: list[tuple[str, str, bytes]] = ()) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target, kind in links:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = target
            tar.addfile(info)
    return path


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def fake_npz(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return path


def declared_npy(shape, dtype=np.int64, payload: bytes = b"\0" * 64) -> bytes:
    """An ``.npy`` whose header declares ``shape`` but that holds only ``payload``."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                  "fortran_order": False, "shape": shape})
    return buffer.getvalue() + payload


def random_edges(n=200, m=1500, seed=1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, n, m), rng.integers(0, n, m)])


def edge_text(edges: np.ndarray, sep=" ", newline="\n") -> str:
    return newline.join(f"{u}{sep}{v}" for u, v in edges) + newline


# --------------------------------------------------------------------------- the shared inputs


@dataclass
class Base:
    """The inputs many cases start from: an edge list, its prepared graph, a temporal one, a batch file."""

    work: Path
    dynpr: list[str]
    edges: np.ndarray
    text: Path
    distinct: int
    graph: object
    prepared: Path
    temporal_npz: Path
    batch_file: Path

    def pagerank(self, graph_path, *flags, expect="ok", names=(), check=None, outputs=(), name=None):
        case(name, [*self.dynpr, "pagerank", graph_path, "--backend", "cpu", *flags], expect, names, check, outputs)


def build_base(work: Path) -> Base:
    sys.path.insert(0, str(REPO / "src"))
    from dynpr.io.prepare import build_graph
    from dynpr.io.readers import read_edges

    dynpr = [sys.executable, "-m", "dynpr"]
    edges = random_edges()
    text = write(work / "base" / "g.txt", "# a graph\n" + edge_text(edges))
    graph, _, _, _ = build_graph(read_edges(text), name="g")
    prepared = work / "base" / "g.npz"
    graph.save(prepared)
    temporal_txt = write(work / "base" / "t.txt", "".join(f"{u} {v} {t}\n" for t, (u, v) in enumerate(edges)))
    tgraph, temporal, _, _ = build_graph(read_edges(temporal_txt), name="t")
    temporal_npz = work / "base" / "t.npz"
    tgraph.save(temporal_npz, temporal_src=temporal[0], temporal_dst=temporal[1], temporal_time=temporal[2])
    batch_file = work / "base" / "b.npz"
    subprocess.run([*dynpr, "batch", prepared, "--fraction", "0.01", "--count", "2", "--out", batch_file],
                   check=True, capture_output=True)
    return Base(work, dynpr, edges, text, len(np.unique(edges)), graph, prepared, temporal_npz, batch_file)


# --------------------------------------------------------------------------- cases of the input files


def file_cases(b: Base) -> None:
    """Edge lists, gzip trouble and bombs, Matrix Market, SuiteSparse archives, prepared and batch files."""
    work, dynpr, edges, base, distinct = b.work, b.dynpr, b.edges, b.text, b.distinct
    graph, prepared, temporal_npz, batch_file, pagerank = b.graph, b.prepared, b.temporal_npz, b.batch_file, b.pagerank

    # ---- SNAP edge lists: contents x containers
    ok_contents = {
        "plain": ("1 2\n2 3\n3 1\n", 3, 3),
        "tabs": ("1\t2\n2\t3\n3\t1\n", 3, 3),
        "crlf": ("1 2\r\n2 3\r\n3 1\r\n", 3, 3),
        "comments-mid-file": ("# c\n1 2\n# mid 2.5 -1 x\n2 3\n3 1 # trailing 1e3\n", 3, 3),
        "blank-lines": ("\n1 2\n\n\n2 3\n   \n3 1\n", 3, 3),
        "no-final-newline": ("1 2\n2 3\n3 1", 3, 3),
        "duplicate-edges": ("1 2\n1 2\n1 2\n2 3\n3 1\n", 3, 3),
        "self-loops-only": ("1 1\n2 2\n", 2, 0),
        "self-loops-mixed": ("1 1\n1 2\n2 3\n3 1\n", 3, 3),
        "sparse-huge-ids": ("0 999999999999999999\n999999999999999999 5\n", 3, 2),
        "int64-max-id": ("9223372036854775807 1\n1 2\n", 3, 2),
        "leading-zeros": ("001 002\n002 003\n", 3, 2),
        "leading-spaces": ("   1 2\n  2 3\n", 3, 2),
        "zero-id": ("0 1\n1 0\n", 2, 2),
        "many-columns-spaces": ("1     2\n2\t \t3\n", 3, 2),
        # issue 48: lists as users have them (a delimiter, a header, a weight column) are read
        "comma-separated": ("1,2\n2,3\n", 3, 2),
        "header-line": ("src dst\n1 2\n", 2, 1),
        "float-weights": ("1 2 0.5\n2 3 1.5\n", 3, 2),
        "negative-weight": ("1 2 5\n2 3 -1\n", 3, 2),  # a time only when said temporal
    }
    bad_contents = {
        "negative-id": ("1 2\n-1 3\n", ("line 2",)),
        "float-id": ("1 2\n2.0 3\n", ("line 2",)),
        "float-id-big": ("1 2\n9007199254740993.0 3\n", ("line 2",)),
        "exp-id": ("1 2\n1e3 3\n", ("line 2",)),
        "hex-id": ("1 2\n0x10 3\n", ("line 2",)),
        "plus-id": ("1 2\n+3 4\n", ("line 2",)),
        "uint64-overflow-id": ("1 2\n18446744073709551616 3\n", ("line 2",)),
        "int64-overflow-id": ("1 2\n9223372036854775808 3\n", ("line 2",)),
        "arabic-digits": ("1 2\n\u0661 \u0662\n", ("line 2",)),
        "fullwidth-digits": ("1 2\n\uff11 \uff12\n", ("line 2",)),
        "nbsp-separator": ("1 2\n2\u00a03\n", ("line 2", "U+00A0")),
        "semicolon": ("1;2\n", ("line 1",)),
        "one-column": ("1 2\n3\n", ("line 2",)),
        "four-columns": ("1 2 3 4\n", ("line 1",)),
        "mixed-2-3-columns": ("1 2\n2 3 7\n", ("line 2",)),
        "empty": ("", ("no edges", "empty")),
        "only-comments": ("# nothing\n# here\n", ("no edges",)),
        "only-blank": ("\n\n  \n", ("no edges",)),
        "bom": ("\ufeff1 2\n2 3\n", ("line 1", "U+FEFF")),
        "nan-weights": ("1 2 nan\n2 3 nan\n", ("line 1",)),
        "inf-weights": ("1 2 inf\n", ("line 1",)),
        "nul-bytes": ("1 2\n\0\0\0\n", ("line 2", "binary")),
        "binary-garbage": (bytes(range(256)) * 4, ("line 1", "binary")),
        "latin1": ("1 2\n2 3 \xe9\n".encode("latin-1"), ("line 2",)),
        "percent-comment": ("% mm style\n1 2\n", ("line 1",)),
        "trailing-text": ("1 2 abc\n", ("line 1",)),
        "html-page": ("<!DOCTYPE html><html><body>Not found</body></html>\n", ("line 1",)),
    }
    for suffix in ("txt", "txt.gz", "csv", "tsv"):
        compress = suffix.endswith(".gz")
        for key, (text, n, m) in ok_contents.items():
            if suffix in ("csv", "tsv") and key not in ("plain", "tabs", "crlf", "comma-separated", "header-line"):
                continue
            path = write(work / f"snap-ok-{key}-{suffix}" / f"e.{suffix}", gz(text) if compress else text)
            pagerank(path, name=f"snap-ok/{key}.{suffix}", check=vertices_are(n, m))
        for key, (text, names) in bad_contents.items():
            if suffix in ("csv", "tsv") and key not in ("float-id", "semicolon"):
                continue
            path = write(work / f"snap-bad-{key}-{suffix}" / f"e.{suffix}", gz(text) if compress else text)
            pagerank(path, expect="input", names=names, name=f"snap-bad/{key}.{suffix}")
    # temporal lists
    for key, text, expect, n in (("ok", "1 2 10\n2 3 5\n3 1 7\n", "ok", 3),
                                 ("ties", "1 2 1\n2 3 1\n3 1 1\n", "ok", 3),
                                 ("huge-times", "1 2 999999999999999999\n2 3 0\n", "ok", 3),
                                 ("float-time", "1 2 1.5\n", "input", 0),
                                 ("time-overflow", "1 2 99999999999999999999\n", "input", 0)):
        path = write(work / f"temporal-{key}" / "t.txt", text)
        pagerank(path, expect=expect, names=("line 1",), check=vertices_are(n) if expect == "ok" else None,
                 name=f"temporal/{key}")
    # gzip trouble
    good_gz = gz(edge_text(edges))
    path = write(work / "gz-truncated" / "e.txt.gz", good_gz[: len(good_gz) // 2])
    pagerank(path, expect="input", names=("e.txt.gz",), name="gz/truncated")
    path = write(work / "gz-bad-crc" / "e.txt.gz", good_gz[:-8] + b"\0" * 8)
    pagerank(path, expect="input", names=("e.txt.gz",), name="gz/bad-crc")
    path = write(work / "gz-garbage" / "e.txt.gz", b"\x1f\x8b" + os.urandom(200))
    pagerank(path, expect="input", names=("e.txt.gz",), name="gz/garbage-after-magic")
    path = write(work / "gz-trailing-garbage" / "e.txt.gz", good_gz + b"garbage")
    pagerank(path, expect="refuse", names=("e.txt.gz",), name="gz/trailing-garbage")
    path = write(work / "gz-empty-member" / "e.txt.gz", gz(""))
    pagerank(path, expect="input", names=("no edges",), name="gz/empty")
    path = write(work / "gz-not-gz" / "e.txt.gz", edge_text(edges))
    pagerank(path, name="gz/plain-text-named-gz", check=vertices_are(distinct))
    path = write(work / "gz-double" / "e.txt.gz", gz(gz(edge_text(edges))))
    pagerank(path, expect="input", names=("line 1", "binary"), name="gz/double-compressed")
    # bombs: 1 GiB inflated at most
    gzip_bomb(write(work / "bomb-zeros" / "e.txt.gz", b""), b"\0" * (64 << 20), 16)
    pagerank(work / "bomb-zeros" / "e.txt.gz", expect="input", names=("line 1",), name="bomb/zeros-1GiB")
    gzip_bomb(write(work / "bomb-edges" / "e.txt.gz", b""), b"1 2\n" * (16 << 20), 16)
    pagerank(work / "bomb-edges" / "e.txt.gz", expect="refuse", names=("e.txt.gz",), name="bomb/edges-1GiB")
    gzip_bomb(write(work / "bomb-newlines" / "e.txt.gz", b""), b"\n" * (64 << 20), 16)
    pagerank(work / "bomb-newlines" / "e.txt.gz", expect="input", names=("no edges",), name="bomb/newlines-1GiB")
    gzip_bomb(write(work / "bomb-comments" / "e.txt.gz", b""), b"# " + b"x" * ((64 << 20) - 3) + b"\n", 16)
    pagerank(work / "bomb-comments" / "e.txt.gz", expect="input", names=("no edges", "line 1"),
             name="bomb/comment-lines")
    flood = gzip.compress(b"\n" * (64 << 20), compresslevel=9)
    for key, head, tail, expect, names in (
        ("bad-line-after-1GiB-blank", b"", b"1 2\n3 x\n", "input", ("line 1073741826",)),
        ("temporal-after-1GiB-blank", b"", b"1 2 3\n2 3 4\n", "ok", ()),
        ("mm-bad-entry-after-1GiB-blank", b"%%MatrixMarket matrix coordinate real general\n3 3 2\n", b"1 2 1\n2 2.0 1\n",
         "input", ("line 1073741828",)),
        ("mm-1GiB-blank-before-size-line", b"%%MatrixMarket matrix coordinate pattern general\n", b"3 3 1\n1 2\n",
         "input", ("size line",)),
    ):
        path = work / f"bomb-{key}" / ("m.mtx.gz" if key.startswith("mm") else "e.txt.gz")
        path.parent.mkdir()
        with open(path, "wb") as fh:
            fh.write(gzip.compress(head))
            for _ in range(16):
                fh.write(flood)
            fh.write(gzip.compress(tail))
        pagerank(path, expect=expect, names=names, name=f"bomb/{key}")
    gzip_bomb(write(work / "bomb-long-line" / "e.txt.gz", b""), b"1" * (64 << 20), 4)
    pagerank(work / "bomb-long-line" / "e.txt.gz", expect="input", names=("line 1",), name="bomb/long-line")

    # ---- Matrix Market
    values = {"pattern": "", "integer": " 3", "real": " -2.5e-3", "complex": " 1.0 -2.0"}
    for container in ("mtx", "mtx.gz", "tar.gz"):
        def mm(key, text, expect="ok", names=(), check=None):
            data = text.encode() if isinstance(text, str) else text
            folder = work / f"mm-{key}-{container}".replace("/", "_")
            if container == "tar.gz":
                path = tar_gz(write(folder / "m.tar.gz", b""), [("m/m.mtx", data)])
            else:
                path = write(folder / f"m.{container}", gz(data) if container.endswith(".gz") else data)
            pagerank(path, expect=expect, names=names, check=check, name=f"mm/{key}.{container}")
        for fld, value in values.items():
            for sym in ("general", "symmetric"):
                text = (f"%%MatrixMarket matrix coordinate {fld} {sym}\n% comment\n4 4 3\n1 2{value}\n"
                        f"3 2{value}\n4 4{value}\n")
                mm(f"ok-{fld}-{sym}", text, check=vertices_are(4, 2 if sym == "general" else 4))
            for key, entry in (("float-row", f"2.0 1{value}"), ("float-col", f"1 2.0{value}"),
                               ("exp-id", f"1e0 2{value}"), ("negative-id", f"-1 2{value}"),
                               ("zero-id", f"0 2{value}"), ("id-beyond-rows", f"5 2{value}")):
                mm(f"bad-{fld}-{key}", f"%%MatrixMarket matrix coordinate {fld} general\n4 4 2\n1 2{value}\n"
                   f"{entry}\n", "input", ("line 4",))
        if container != "mtx":
            continue
        head = "%%MatrixMarket matrix coordinate pattern general\n"
        for key, text, expect, names in (
            ("crlf", head.replace("\n", "\r\n") + "3 3 2\r\n1 2\r\n2 3\r\n", "ok", ()),
            ("comments-between-entries", head + "3 3 2\n1 2\n% mid\n2 3\n", "ok", ()),
            ("blank-lines", head + "\n3 3 2\n\n1 2\n\n2 3\n", "ok", ()),
            ("uppercase-banner", head.upper() + "3 3 2\n1 2\n2 3\n", "ok", ()),
            ("skew-symmetric", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 1 1.0\n", "ok", ()),
            ("hermitian", "%%MatrixMarket matrix coordinate complex hermitian\n3 3 1\n2 1 1.0 0.5\n", "ok", ()),
            ("zero-entries", head + "3 3 0\n", "any", ()),
            ("non-square", head + "3 4 1\n1 2\n", "input", ("square", "3x4")),
            ("array-layout", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "input", ("array",)),
            ("no-banner", "3 3 1\n1 2\n", "input", ("banner", "Matrix Market")),
            ("bad-field", "%%MatrixMarket matrix coordinate double general\n3 3 1\n1 2\n", "input", ("double",)),
            ("no-size-line", head + "% only comments\n", "input", ("size line",)),
            ("size-float", head + "3.0 3 1\n1 2\n", "input", ("line 2",)),
            ("size-negative", head + "-3 -3 1\n1 2\n", "input", ("line 2",)),
            ("size-two-fields", head + "3 3\n1 2\n", "input", ("line 2",)),
            ("truncated", head + "3 3 5\n1 2\n2 3\n", "input", ("truncated", "5")),
            ("more-entries", head + "3 3 1\n1 2\n2 3\n", "input", ("more entries",)),
            # value columns are not read (documented): a pattern entry with one reads the same ids
            ("pattern-three-fields", head + "3 3 1\n1 2 3\n", "any", ()),
            ("real-missing-value", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 3\n", "any", ()),
            ("real-nan-value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 nan\n", "ok", ()),
            ("huge-vertices", head + "300000000 300000000 1\n1 2\n", "resource", ("GiB", "m.mtx")),
            ("beyond-int32", head + "3000000000 3000000000 1\n1 2\n", "input", ("int32",)),
            ("huge-entries", head + "3 3 999999999999\n1 2\n", "input", ("size line", "entries")),
            ("size-overflow", head + "99999999999999999999 3 1\n1 2\n", "input", ("line 2",)),
            ("unicode-id", head + "3 3 1\n\u0661 2\n", "input", ("line 3",)),
            ("binary", head.encode() + b"3 3 1\n\x00\x01\x02\n", "input", ("line 3",)),
        ):
            mm(key, text, expect, names)
    mm_text = b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n"
    for key, members, links, expect, names in (
        ("dotdot-member", [("../m.mtx", mm_text)], [], "input", ("unsafe",)),
        ("absolute-member", [("/tmp/m.mtx", mm_text)], [], "input", ("unsafe",)),
        ("symlink-out", [("m/m.mtx", mm_text)], [("m/evil", "/etc/passwd", tarfile.SYMTYPE)], "input", ("unsafe",)),
        ("two-matrices", [("m/a.mtx", mm_text), ("m/b.mtx", mm_text)], [], "input", ("one matrix",)),
        ("no-matrix", [("m/readme.txt", b"hello")], [], "input", ("no .mtx",)),
        ("other-name-single", [("x/x.mtx", mm_text)], [], "ok", ()),
        ("with-extra-files", [("m/m.mtx", mm_text), ("m/m_b.mtx", mm_text)], [], "ok", ()),
        ("member-gz", [("m/m.mtx.gz", gz(mm_text))], [], "any", ()),
        ("empty-archive", [], [], "input", ("no .mtx",)),
    ):
        path = tar_gz(write(work / f"tar-{key}" / "m.tar.gz", b""), members, links)
        pagerank(path, expect=expect, names=names, name=f"tar/{key}")
    path = write(work / "tar-truncated" / "m.tar.gz", (work / "tar-two-matrices" / "m.tar.gz").read_bytes()[:60])
    pagerank(path, expect="input", names=("m.tar.gz",), name="tar/truncated")
    path = write(work / "tar-not-gz" / "m.tar.gz", b"not an archive at all\n")
    pagerank(path, expect="input", names=("m.tar.gz",), name="tar/not-an-archive")
    # a 1 GiB member declaring one entry: stops at the first chunk, not after inflating it all
    big = work / "tar-big-member" / "m.tar.gz"
    big.parent.mkdir()
    with tarfile.open(big, "w:gz", compresslevel=1) as tar:
        data = mm_text.replace(b"3 3 2", b"3 3 1") + b"1 2\n" * ((1 << 30) // 4)
        info = tarfile.TarInfo("m/m.mtx")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        del data
    pagerank(big, expect="input", names=("more entries",), name="tar/1GiB-member-one-entry")

    # ---- prepared graphs (.npz)
    def npz_case(key, arrays_or_bytes, expect="input", names=("g.npz",), flags=()):
        path = work / f"npz-{key}" / "g.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(arrays_or_bytes, bytes):
            path.write_bytes(arrays_or_bytes)
        else:
            np.savez(path, **arrays_or_bytes)
        pagerank(path, *flags, expect=expect, names=names, name=f"npz/{key}")

    with np.load(prepared) as data:
        stored = {k: data[k] for k in data.files}
    with np.load(temporal_npz) as data:
        tstored = {k: data[k] for k in data.files}
    npz_case("valid", stored, "ok")
    npz_case("valid-temporal", tstored, "ok")
    for key, edit in (
        ("vertex-ids-reversed", lambda a: a.update(vertex_ids=a["vertex_ids"][::-1].copy())),
        ("vertex-ids-duplicated", lambda a: a.update(vertex_ids=np.zeros_like(a["vertex_ids"]))),
        ("vertex-ids-negative", lambda a: a.update(vertex_ids=-a["vertex_ids"] - 1)),
        ("no-digest", lambda a: a.pop("graph_sha256")),
        ("wrong-digest", lambda a: a.update(graph_sha256=np.asarray("0" * 64))),
        ("no-arrays-digest", lambda a: a.pop("arrays_sha256")),
        ("targets-edited", lambda a: a.update(targets=a["targets"][::-1].copy())),
        ("offsets-float", lambda a: a.update(offsets=a["offsets"].astype(np.float64))),
        ("offsets-2d", lambda a: a.update(offsets=a["offsets"][None, :])),
        ("missing-sources", lambda a: a.pop("sources")),
        ("extra-array", lambda a: a.update(surprise=np.arange(3))),
        ("object-array", lambda a: a.update(vertex_ids=a["vertex_ids"].astype(object))),
    ):
        arrays = dict(stored)
        edit(arrays)
        npz_case(key, arrays)
    for key, edit in (("temporal-time-reversed", lambda a: a.update(temporal_time=a["temporal_time"][::-1].copy())),
                      ("temporal-src-edited", lambda a: a.update(temporal_src=a["temporal_dst"].copy())),
                      ("temporal-length", lambda a: a.update(temporal_time=a["temporal_time"][:-1].copy()))):
        arrays = dict(tstored)
        edit(arrays)
        npz_case(key, arrays)
    raw_npz = prepared.read_bytes()
    npz_case("truncated-half", raw_npz[: len(raw_npz) // 2])
    npz_case("truncated-tail", raw_npz[:-30])
    npz_case("not-a-zip", b"hello, not an npz\n")
    npz_case("empty-file", b"")
    npz_case("text-edges-named-npz", edge_text(edges).encode())
    huge = {name: declared_npy((3_000_000_000,)) for name in ("offsets", "targets", "in_offsets", "sources")}
    (work / "npz-huge-declared").mkdir()
    fake_npz(work / "npz-huge-declared" / "g.npz", huge)
    pagerank(work / "npz-huge-declared" / "g.npz", expect="refuse", names=("g.npz",), name="npz/huge-declared-shapes")
    (work / "npz-shape-mismatch").mkdir()
    fake_npz(work / "npz-shape-mismatch" / "g.npz", {**{k: npy_bytes(v) for k, v in stored.items() if v.ndim},
                                                      "sources": declared_npy((10 ** 9,), np.int32)})
    pagerank(work / "npz-shape-mismatch" / "g.npz", expect="input", names=("g.npz",), name="npz/declared-vs-stored")
    (work / "npz-pickle").mkdir()
    fake_npz(work / "npz-pickle" / "g.npz", {**{k: npy_bytes(v) for k, v in stored.items()},
                                              "vertex_ids": npy_bytes(np.array([{"a": 1}], dtype=object))})
    pagerank(work / "npz-pickle" / "g.npz", expect="input", names=("g.npz", "pickle"), name="npz/pickled-member")
    (work / "npz-stored").mkdir()  # uncompressed members, rewritten one by one (memory-mapped on load)
    fake_npz(work / "npz-stored" / "g.npz", {k: npy_bytes(v) for k, v in stored.items()})
    pagerank(work / "npz-stored" / "g.npz", expect="ok", name="npz/members-rewritten")
    npz_case("kahn-valid", stored, "ok")
    case("npz/kahn-vertex-ids-negative", [*dynpr, "kahn", work / "npz-vertex-ids-negative" / "g.npz", "--backend",
                                          "cpu"], "input", ("g.npz",))
    case("npz/batch-from-edited", [*dynpr, "batch", work / "npz-targets-edited" / "g.npz", "--fraction", "0.01",
                                   "--out", work / "npz-targets-edited" / "b.npz"], "input", ("g.npz",))

    # ---- batch files
    with np.load(batch_file) as data:
        bstored = {k: data[k] for k in data.files}

    def batch_case(key, arrays, expect="input", names=("b.npz",), graph_path=prepared, flags=()):
        folder = work / f"batch-{key}"
        folder.mkdir()
        if isinstance(arrays, bytes):
            write(folder / "b.npz", arrays)
        else:
            np.savez(folder / "b.npz", **arrays)
        pagerank(graph_path, "--batch", folder / "b.npz", "--approach", "static,dfp", *flags, expect=expect,
                 names=names, name=f"batch/{key}")

    n = graph.num_vertices
    batch_case("valid", bstored, "ok")
    for key, edit in (
        ("id-beyond-graph", lambda a: a["ins_src"].__setitem__(0, n + 5)),
        ("id-negative", lambda a: a["del_dst"].__setitem__(0, -1)),
        ("id-int64-wrap", lambda a: a.update(ins_src=a["ins_src"].astype(np.int64) + (1 << 32))),
        ("del-dst-longer", lambda a: a.update(del_dst=np.append(a["del_dst"], 1))),
        ("ins-src-shorter", lambda a: a.update(ins_src=a["ins_src"][:-1].copy())),
        ("ptr-decreasing", lambda a: a.update(del_ptr=a["del_ptr"][::-1].copy())),
        ("ptr-length-differs", lambda a: a.update(ins_ptr=a["ins_ptr"][:-1].copy())),
        ("ptr-not-from-zero", lambda a: a["ins_ptr"].__setitem__(0, 1)),
        ("ids-float", lambda a: a.update(ins_src=a["ins_src"].astype(np.float64))),
        ("missing-ins-dst", lambda a: a.pop("ins_dst")),
        ("for-another-graph", lambda a: a.update(param_graph_sha256=np.asarray("f" * 64))),
        ("no-made-for", lambda a: [a.pop(k) for k in list(a) if k.startswith("param_graph")]),
        ("delete-absent-edge", lambda a: a.update(del_src=np.zeros_like(a["del_src"]),
                                                  del_dst=np.full_like(a["del_dst"], n - 1))),
        ("insert-present-edge", lambda a: a.update(ins_src=np.zeros_like(a["ins_src"]),
                                                   ins_dst=np.zeros_like(a["ins_dst"]))),
        ("ids-2d", lambda a: a.update(del_src=a["del_src"][None, :])),
    ):
        arrays = {k: v.copy() for k, v in bstored.items()}
        edit(arrays)
        batch_case(key, arrays)
    batch_case("truncated", batch_file.read_bytes()[:-40])
    batch_case("not-an-npz", b"nope")
    batch_case("graph-file-as-batch", prepared.read_bytes())
    folder = work / "batch-huge-declared"
    folder.mkdir()
    fake_npz(folder / "b.npz", {**{k: npy_bytes(v) for k, v in bstored.items()},
                                "ins_src": declared_npy((4_000_000_000,), np.int32),
                                "ins_dst": declared_npy((4_000_000_000,), np.int32)})
    pagerank(prepared, "--batch", folder / "b.npz", expect="refuse", names=("b.npz",), name="batch/huge-declared")
    # the temporal list holds the same edges: the same graph, which the batch fits
    pagerank(temporal_npz, "--batch", batch_file, expect="ok", name="batch/on-temporal-graph-of-same-edges")
    other = write(work / "batch-other-graph" / "o.txt", edge_text(random_edges(seed=7)))
    pagerank(other, "--batch", batch_file, expect="input", names=("b.npz",), name="batch/on-another-graph")
    pagerank(prepared, "--batch", batch_file, "--no-self-loops", expect="input", names=("--no-self-loops", "--batch"),
             name="batch/with-no-self-loops")
    pagerank(base, "--batch", batch_file, expect="ok", name="batch/on-text-of-same-graph")

