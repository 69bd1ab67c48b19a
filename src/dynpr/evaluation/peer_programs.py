"""PageRank programs of other projects, run on the pipeline's graphs: Gunrock's and Hornet's.

A *program peer* is a binary the user built, named in the config (``peers: {gunrock: {program:
PATH}}``). Each kind (:data:`KINDS`) knows its command line, what it prints and which PageRank
settings it runs with; none of the two accepts the paper's (alpha 0.85, tau 1e-10 on the
L-inf change, at most 500 iterations) from its command line, so every row records the
settings the program fixed (:attr:`ProgramKind.settings`) and ``converged`` says whether they
meet the config's tau. :func:`run_program` runs one on a Matrix Market file
(:func:`dynpr.io.matrix_market.write_matrix_market`) and returns its timed runs; a program that
is missing, not executable, crashes, prints nothing parseable or runs past its wall-clock limit
(``peers.timeout_s``, :data:`DEFAULT_TIMEOUT_S`) is one :class:`PeerError` line naming the peer
and the graph.

- ``gunrock``: the ``pr`` example of Gunrock's essentials API (gunrock/gunrock,
  ``examples/algorithms/pr``), float32, push with one atomic add per edge, tolerance 1e-6 on the
  L-inf change and alpha 0.85 fixed in its source, no iteration cap. Run once as
  ``pr -m GRAPH.mtx -n RUNS --export_metrics -d DIR -f gunrock.json`` (it aborts on a flag it does not
  know): it prints the first ranks (``GPU rank[:40] = ...``) and the last run's ``GPU Elapsed Time : X
  (ms)``; the JSON has every run's time (``process_times``). Only a build with Gunrock's metrics
  collection on adds each run's iterations (``search_depths``, the loop's count); its per-edge counters
  slow it, so such a build is the optional ``iterations_program`` (:func:`program_iterations`), never the
  timed one. The first of the RUNS is a warm-up and left out. At gunrock/gunrock 01f125c8 (and since
  59a1dab2, 2026-01-15) its atomic add is compiled, under nvcc, as a plain load-add-store
  (``math::atomic::add`` tests ``#if __HIP_DEVICE_COMPILE__``, which nvcc does not define): concurrent
  updates of one vertex are lost, differently each iteration, so on graphs with contended vertices the
  L-inf change stays above 1e-6 and the program never stops; only the wall-clock limit ends it.
- ``hornet``: the PageRank test of HornetsNest (hornet-gt/hornet, ``hornetsnest/test/PageRankTest.cu``),
  float32, threshold 0.001 on the summed change, at most 50 iterations and damping 0.85 fixed.
  Run as ``pagerank GRAPH.mtx`` once per repeat: it times the directed solve (``PR---InputAsIS  X ms``,
  printing ``###`` once per iteration before it), then an undirected one, which is not recorded.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from dynpr.errors import InputError
from dynpr.graph.atomic_files import sha256_file

#: Columns of ``results/peers/{dataset}.csv``: one row per timed run of dynpr's Static or a peer.
PEER_COLUMNS = ("dataset", "peer", "kind", "precision", "backend", "device", "repeat", "vertices", "edges",
                "iterations", "converged", "time_ms", "ms_per_iteration", "l1_error", "ranks_compared", "alpha",
                "tolerance", "max_iterations", "settings", "version", "git_commit", "timestamp")
#: Lines of a program's output kept in the job's log.
LOG_LINES = 40
#: Seconds one start of a program may run (``peers.timeout_s``). Gunrock's reader parses about 3 million
#: Matrix Market entries a second (fscanf), so rmat-24's quarter-billion take 1.5 minutes before any run;
#: 300 s leaves as much again for its runs and still ends a program that never stops within minutes.
DEFAULT_TIMEOUT_S = 300.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"


class PeerError(InputError):
    """A peer program that cannot be run or whose output does not parse (one line: peer, program, graph).
    The program is the config's (``peers.<kind>.program``): bad input, as a wrong path is."""


@dataclass(frozen=True)
class ProgramRun:
    """One timed solve of a program: milliseconds, iterations (None: not printed) and the ranks it printed
    (the first ``len(ranks)`` vertices; empty: none)."""

    time_ms: float
    iterations: int | None
    ranks: np.ndarray


@dataclass(frozen=True)
class ProgramKind:
    """What dynpr knows of one kind of program peer.

    ``command(program, graph_file, runs, folder)`` is its command line; ``parse(output, folder)``
    its timed runs from what it printed (and wrote into ``folder``); ``invocations(repeat)`` how many
    times it is started for ``repeat`` timed runs and ``runs(repeat)`` the runs asked of each start.
    """

    name: str
    label: str
    precision: str
    alpha: float
    tolerance: float
    max_iterations: int | None
    settings: str
    command: Callable[[str, str, int, str], list[str]]
    parse: Callable[[str, Path], list[ProgramRun]]
    invocations: Callable[[int], int]
    runs: Callable[[int], int]

    def converged(self, tolerance: float, max_iterations: int, iterations: int | None) -> bool:
        """Whether a run met the config's ``tolerance`` within ``max_iterations``: never when the program's own
        tolerance is looser (its stopping rule says nothing about the change at tau), nor past the cap."""
        if self.tolerance > tolerance:
            return False
        return iterations is not None and iterations < (self.max_iterations or max_iterations)


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(_NUMBER, text)]


def _gunrock_command(program: str, graph_file: str, runs: int, folder: str) -> list[str]:
    return [program, "-m", graph_file, "-n", str(runs), "--export_metrics", "-d", folder, "-f", "gunrock.json"]


def _gunrock_metrics(folder: Path) -> dict:
    path = folder / "gunrock.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except (ValueError, OSError) as err:
        raise ValueError(f"its metrics file {path.name} does not parse ({err})") from None


def _gunrock_parse(output: str, folder: Path) -> list[ProgramRun]:
    """The timed runs of Gunrock's ``pr``: from its metrics JSON when it wrote one (every run but the first,
    a warm-up), else the printed ``GPU Elapsed Time`` (the last run)."""
    times = re.findall(rf"GPU Elapsed Time\s*:\s*{_NUMBER}\s*\(ms\)", output)
    if not times:
        raise ValueError("printed no line `GPU Elapsed Time : X (ms)`")
    head = re.search(r"GPU rank\S*\s*[=:]?(.*)$", output, re.MULTILINE)
    ranks = np.array(_numbers(head.group(1)) if head else [], dtype=np.float64)
    metrics = _gunrock_metrics(folder)
    process_times = [float(t) for t in metrics.get("process_times", [])]
    # search_depths: a metrics build only; the enactor's loop count, i.e. the iterations (not a 0-based index)
    depths = metrics.get("search_depths")
    if depths is None or len(depths) != len(process_times):
        depths = [None] * len(process_times)
    if len(process_times) < 2:  # no metrics (or one run): the printed time, that of the last run
        return [ProgramRun(float(times[-1]), None if not depths or depths[-1] is None else int(depths[-1]), ranks)]
    return [ProgramRun(t, None if d is None else int(d), ranks) for t, d in zip(process_times[1:], depths[1:])]


def _hornet_parse(output: str, folder: Path) -> list[ProgramRun]:
    """The directed solve of HornetsNest's PageRank test: its time line and the ``###`` printed per iteration."""
    text = _ANSI.sub("", output)
    match = re.search(rf"PR---InputAsIS\s+{_NUMBER}\s*(ms|s|us|µs|ns)?\b", text)
    if match is None:
        raise ValueError("printed no line `PR---InputAsIS  X ms`")
    scale = {"s": 1e3, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}.get(match.group(2) or "ms", 1.0)
    iterations = text[:match.start()].count("###") or None
    return [ProgramRun(float(match.group(1)) * scale, iterations, np.empty(0))]


KINDS = {
    "gunrock": ProgramKind(
        "gunrock", "Gunrock (essentials pr example)", "float32", 0.85, 1e-6, None,
        "alpha 0.85 and tolerance 1e-6 (L-inf) fixed in the program, no iteration cap, float32, push with "
        "atomic adds", _gunrock_command, _gunrock_parse, invocations=lambda repeat: 1,
        runs=lambda repeat: repeat + 1),
    "hornet": ProgramKind(
        "hornet", "Hornet (HornetsNest PageRank test)", "float32", 0.85, 1e-3, 50,
        "damping 0.85, threshold 1e-3 on the summed change and at most 50 iterations fixed in the program, "
        "float32", lambda program, graph_file, runs, folder: [program, graph_file], _hornet_parse,
        invocations=lambda repeat: repeat, runs=lambda repeat: 1),
}


def check_program(kind: str, program: str | Path, graph: str) -> Path:
    """The program of peer ``kind`` as a path, refused in one line when it cannot be run.

    Raises
    ------
    PeerError
        For an unknown kind, or a program that is missing, a folder or not executable.
    """
    if kind not in KINDS:
        raise PeerError(f"peer {kind!r} on {graph}: unknown kind; known: {', '.join(KINDS)}")
    path = Path(program).expanduser()
    where = f"peer {kind} ({path}) on {graph}"
    if not path.exists():
        raise PeerError(f"{where}: no such file; set peers.{kind}.program to your build of it")
    if path.is_dir():
        raise PeerError(f"{where}: is a folder, not the program")
    if not os.access(path, os.X_OK):
        raise PeerError(f"{where}: is not executable (chmod +x it)")
    return path


def program_version(path: Path) -> str:
    """What identifies the program that ran: the SHA-256 of its binary (neither kind prints a version)."""
    return f"sha256:{sha256_file(path)}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in _ANSI.sub("", text).splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def _run_with_limit(command: list[str], folder: Path, timeout_s: float) -> subprocess.CompletedProcess | None:
    """``command`` run in ``folder``, its output captured; None when it ran past ``timeout_s`` seconds.

    It runs in a process group of its own, killed whole when it does not stop in time or the job is
    interrupted (Ctrl-C): its own children too, which would otherwise keep the GPU and its output open."""
    with subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        finally:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def run_program(kind: str, program: str | Path, graph_file: str | Path, graph: str, repeat: int, folder: str | Path,
                log: Callable[[str], None] = lambda message: None,
                timeout_s: float = DEFAULT_TIMEOUT_S) -> list[ProgramRun]:
    """``repeat`` timed runs of peer ``kind`` on a Matrix Market file.

    Parameters
    ----------
    kind : {"gunrock", "hornet"}
    program : str or Path
        The user's build of it.
    graph_file : str or Path
        The graph, as :func:`dynpr.io.matrix_market.write_matrix_market` writes it.
    graph : str
        The graph's name, for messages.
    repeat : int
        Timed runs wanted (Gunrock: one start with ``repeat + 1`` runs, the first a warm-up; Hornet: ``repeat``
        starts).
    folder : str or Path
        An empty folder the program runs in (Gunrock writes its metrics there).
    log : callable
        Takes the program's command line and the last :data:`LOG_LINES` lines of its output.
    timeout_s : float
        Seconds each start may run before it is killed (``peers.timeout_s``).

    Returns
    -------
    list of ProgramRun

    Raises
    ------
    PeerError
        One line naming the peer, program and graph: missing, not executable, a non-zero exit (with the last
        line it printed), output without the line it must print, or a start that ran past ``timeout_s``.
    """
    spec = KINDS.get(kind)
    path = check_program(kind, program, graph).resolve()
    graph_file, folder = Path(graph_file).resolve(), Path(folder).resolve()  # the program runs in `folder`
    where = f"peer {kind} ({path}) on {graph}"
    found: list[ProgramRun] = []
    for _ in range(spec.invocations(repeat)):
        command = spec.command(str(path), str(graph_file), spec.runs(repeat), str(folder))
        log("$ " + " ".join(command))
        try:
            done = _run_with_limit(command, folder, timeout_s)
        except OSError as err:
            raise PeerError(f"{where}: cannot be started ({err.strerror or err})") from None
        if done is None:
            raise PeerError(f"{where}: did not finish within peers.timeout_s = {timeout_s:g} s and was killed")
        output = done.stdout + done.stderr
        log("\n".join(output.splitlines()[-LOG_LINES:]))
        if done.returncode != 0:
            status = (f"was killed by signal {-done.returncode}" if done.returncode < 0
                      else f"exited with status {done.returncode}")
            raise PeerError(f"{where}: {status}: {_last_line(output)}")
        try:
            runs = spec.parse(done.stdout, folder)
        except ValueError as err:
            raise PeerError(f"{where}: {err}; it printed: {_last_line(output)}") from None
        bad = [r.time_ms for r in runs if not (math.isfinite(r.time_ms) and r.time_ms > 0)]
        if bad:
            raise PeerError(f"{where}: reported a time of {bad[0]} ms, not a positive number")
        found += runs
    return found


def program_iterations(kind: str, program: str | Path, graph_file: str | Path, graph: str, folder: str | Path,
                       log: Callable[[str], None] = lambda message: None,
                       timeout_s: float = DEFAULT_TIMEOUT_S) -> int:
    """The iterations a build of peer ``kind`` that counts them (``peers.<kind>.iterations_program``) takes on
    a Matrix Market file: one run (after Gunrock's warm-up), its time not kept.

    Parameters
    ----------
    kind, program, graph_file, graph, folder, log, timeout_s
        As for :func:`run_program`.

    Returns
    -------
    int

    Raises
    ------
    PeerError
        As :func:`run_program`, or when the program reports no iteration count (a build without metrics).
    """
    runs = run_program(kind, program, graph_file, graph, 1, folder, log, timeout_s)
    if runs[-1].iterations is None:
        raise PeerError(f"peer {kind} iterations_program ({Path(program).expanduser()}) on {graph}: reported no "
                        f"iteration count (for Gunrock: a build with its metrics collection on writes search_depths)")
    return runs[-1].iterations


def head_l1(ranks: np.ndarray, reference: np.ndarray) -> tuple[float, int]:
    """L1 distance of the first ``len(ranks)`` ranks a program printed to the reference's, and that count
    (NaN and 0 when it printed none)."""
    k = min(len(ranks), len(reference))
    if k == 0:
        return math.nan, 0
    return float(np.abs(ranks[:k] - reference[:k]).sum()), k


def read_peers(paths) -> pd.DataFrame:
    """Peers tables (``results/peers/*.csv``) concatenated; empty, with :data:`PEER_COLUMNS`, when there are none."""
    frames = [pd.read_csv(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(PEER_COLUMNS))
