"""Memory-mapped .npz members: the same arrays as np.load, no copy, and the same refusals."""

import signal
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from dynpr.graph.graph import Graph
from dynpr.graph.hostmem import status_gib
from dynpr.graph.npz_files import MAP_MIN_BYTES, chunks, load_members, release_pages
from dynpr.generate.rmat import rmat_graph

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")


def mapped_resident_bytes() -> int:
    """Bytes of mapped files in this process's resident set (RssFile)."""
    return round(status_gib()["RssFile"] * 2**30)


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


@linux_only
def test_released_pages_leave_the_resident_set_and_read_back_the_same(tmp_path):
    path = tmp_path / "big.npz"
    values = np.arange(8 << 20, dtype=np.int64)  # 64 MiB
    np.savez(path, big=values)
    big = np.asarray(load_members(path)["big"])  # a plain view of the map, as the graph checks take it
    before = mapped_resident_bytes()
    total = int(big.sum())  # every page read
    assert mapped_resident_bytes() - before > 48 << 20
    release_pages(big[1:])  # a view: its whole pages go
    assert mapped_resident_bytes() - before < 8 << 20
    assert int(big.sum()) == total and np.array_equal(big[:5], values[:5])


def test_release_leaves_memory_that_is_not_a_read_only_map_alone(tmp_path):
    values = np.arange(1 << 20, dtype=np.int64)
    release_pages(values)
    release_pages(values[3:])
    assert np.array_equal(values, np.arange(1 << 20, dtype=np.int64))
    path = tmp_path / "w.npy"
    writable = np.lib.format.open_memmap(path, mode="w+", dtype=np.int64, shape=(1 << 20,))
    writable[:] = 7  # not yet written back: dropping its pages would lose the values
    release_pages(writable)
    assert int(writable.sum()) == 7 << 20


def test_chunks_cover_the_array_in_order():
    values = np.arange(1000, dtype=np.int32)
    parts = list(chunks(values, chunk_bytes=4 * 300))
    assert [len(p) for p in parts] == [300, 300, 300, 100]
    assert np.array_equal(np.concatenate(parts), values)
    assert list(chunks(values[:0])) == []


@linux_only
def test_loading_a_graph_keeps_a_part_of_it_resident(tmp_path):
    # checked, then hashed, part by part: the pages go as each part is done
    path = tmp_path / "g.npz"
    rmat_graph(19, 16, seed=1).save(path)
    before = mapped_resident_bytes()
    graph = Graph.load(path)
    assert graph.nbytes > 60 << 20
    assert mapped_resident_bytes() - before < graph.nbytes / 4


def test_a_mapped_file_rewritten_in_place_is_refused_one_replaced_is_not(tmp_path, monkeypatch):
    """Re-audit BAD case: a prepared graph overwritten in place (rsync --inplace, dd conv=notrunc) while a
    run mapped it was computed on and reported."""
    import os

    from dynpr.graph import npz_files
    from dynpr.errors import InputError

    path = tmp_path / "a.npz"
    np.savez(path, big=np.arange(MAP_MIN_BYTES // 8 + 5, dtype=np.int64))
    got = load_members(path)
    assert isinstance(got["big"], np.memmap)
    npz_files.check_mapped_files_unchanged()  # untouched: passes
    fresh = tmp_path / "fresh.npz"
    np.savez(fresh, big=np.zeros(3))
    os.replace(fresh, path)  # a new inode: the mapped one is intact
    npz_files.check_mapped_files_unchanged()
    path.unlink()
    np.savez(path, big=np.arange(MAP_MIN_BYTES // 8 + 5, dtype=np.int64))
    got = load_members(path)
    with open(path, "r+b") as fh:  # as dd conv=notrunc does
        fh.seek(-100, os.SEEK_END)
        fh.write(b"\xff" * 8)
    with pytest.raises(InputError, match=rf"{path}: changed on disk while this run read it \(rewritten in place\?\)"):
        npz_files.check_mapped_files_unchanged()


def test_the_cli_reports_nothing_computed_on_a_graph_rewritten_under_its_map(tmp_path, capsys, monkeypatch):
    import os

    import dynpr.pagerank
    from dynpr.graph import npz_files
    from cli_errors import one_error_line

    monkeypatch.setattr(npz_files, "MAP_MIN_BYTES", 0)  # a small graph mapped as a large one is
    path = tmp_path / "g.npz"
    Graph.from_edges(np.arange(50), (np.arange(50) + 1) % 50, 50).save(path)
    solve = dynpr.pagerank.update

    def rewritten_meanwhile(*args, **kwargs):
        with open(path, "r+b") as fh:
            fh.seek(-200, os.SEEK_END)
            fh.write(b"\x00" * 4)
        return solve(*args, **kwargs)

    monkeypatch.setattr(dynpr.pagerank, "update", rewritten_meanwhile)
    line = one_error_line(capsys, ["pagerank", str(path), "--backend", "cpu", "--ranks-out", str(tmp_path / "r.csv")])
    assert line == (f"dynpr: error: {path}: changed on disk while this run read it (rewritten in place?); its "
                    "results are not reported: rerun once the file is complete")
    assert capsys.readouterr().out == "" and not (tmp_path / "r.csv").exists()


_CUT_UNDER_THE_RUN = """
import os, sys
import dynpr.pagerank
from dynpr import cli
from dynpr.graph import npz_files

npz_files.MAP_MIN_BYTES = 0  # a small graph mapped as a large one is
graph, ranks = sys.argv[1:]
solve = dynpr.pagerank.update

def cut_meanwhile(*args, **kwargs):
    os.truncate(graph, 100)  # as `truncate` or `cp` over it does while the run maps it
    return solve(*args, **kwargs)

dynpr.pagerank.update = cut_meanwhile
sys.exit(cli.main(["pagerank", graph, "--backend", "cpu", "--ranks-out", ranks]))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGBUS"), reason="POSIX bus errors")
def test_a_graph_cut_short_under_a_run_is_named_not_a_silent_crash(tmp_path):
    """Re-audit BAD case: truncating a prepared graph while a run maps it killed the process with a
    bus error and no message."""
    path = tmp_path / "g.npz"
    Graph.from_edges(np.arange(5000), (np.arange(5000) * 7 + 1) % 5000, 5000).save(path)
    done = subprocess.run([sys.executable, "-c", _CUT_UNDER_THE_RUN, str(path), str(tmp_path / "r.csv")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (f"dynpr: error: {path}: cut short on disk while this run read it (bus "
                                            "error); nothing was written: rerun once the file is complete")
    assert "Fatal Python error" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.npz"]  # no ranks file, no temporary one


_CUT_WHILE_WRITING = """
import os, sys
import numpy as np
from dynpr.graph.atomic_files import atomic_path
from dynpr.graph.npz_files import exit_on_bus_error, load_members

exit_on_bus_error()
mapped, out = sys.argv[1:]
ids = load_members(mapped)["ids"]
with atomic_path(out) as tmp, open(tmp, "w") as fh:
    fh.write("id\\n")
    os.truncate(mapped, 0)
    np.savetxt(fh, ids)  # reads the lost pages
"""


@pytest.mark.skipif(not hasattr(signal, "SIGBUS"), reason="POSIX bus errors")
def test_a_bus_error_while_writing_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "ids.npz"
    np.savez(path, ids=np.arange(MAP_MIN_BYTES // 8 * 2, dtype=np.int64))
    done = subprocess.run([sys.executable, "-c", _CUT_WHILE_WRITING, str(path), str(tmp_path / "out.csv")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == (f"dynpr: error: {path}: cut short on disk while this run read it (bus error); nothing "
                           "was written: rerun once the file is complete\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.npz"]
