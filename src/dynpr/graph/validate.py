"""The one validation layer: every graph, batch and rank vector is checked here before use.

Graphs read from a file (a prepared ``.npz``, a temporal base) pass
:func:`check_graph` (shapes, integer dtypes, monotone offsets, ids in range,
rows sorted without duplicates, a self-loop on every vertex, and a CSR that
describes the same edges as its transpose) and carry a sha256 of their CSR
(:attr:`Graph.sha256 <dynpr.graph.graph.Graph.sha256>`) and one of every other array
(:func:`arrays_digest`) that :func:`read_graph_npz` verifies. Every ``.npz`` is
measured from its ``.npy`` headers before any array is read (:func:`check_npz_header`). Batch ids are
range-checked in the dtype they arrived in, before any cast to int32
(:func:`as_vertex_ids`), and a batch file records the graph it was made for
(:func:`graph_record`, :func:`check_made_for`). :func:`dynpr.pagerank.check_update_inputs`
is what :mod:`dynpr.pagerank` runs before handing anything to an engine.

The checks of ids and CSR arrays live below the graph type (:mod:`dynpr.graph.csr_checks`, the ``.npz``
bounds in :mod:`dynpr.graph.npz_files`, the graph-building ones in :mod:`dynpr.graph.graph`); this module
gathers them with the checks of batches, ranks, numbers and config files, so that callers
import every check from one place. Every check is vectorized: a few passes over the edge
arrays, no Python loop per edge or vertex.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from pathlib import Path

import numpy as np

from dynpr.graph.arrays import array_module
from dynpr.graph.csr_checks import (ARRAYS_DIGEST_KEY, DIGEST_KEY, GRAPH_ARRAYS, arrays_digest,  # noqa: F401 (gathered)
                              as_vertex_ids, check_ids)
from dynpr.errors import BatchError, InputError
from dynpr.graph.graph import Graph, check_graph, read_graph_npz  # noqa: F401 (gathered)
from dynpr.graph.npz_files import check_npz_header, npz_headers, read_npz  # noqa: F401 (gathered)

#: batch-file parameters recording the graph a batch file was made for
MADE_FOR = ("graph_vertices", "graph_edges", "graph_sha256")


# --------------------------------------------------------------------------- batches and ranks


def graph_record(graph: Graph) -> dict:
    """What a batch file records about the graph it was made for (``param_graph_*``)."""
    return {"graph_vertices": graph.num_vertices, "graph_edges": graph.num_edges,
            "graph_sha256": graph.sha256}


def check_made_for(path: str | Path, params: dict, graph: Graph, graph_name: str) -> None:
    """Refuse a batch file made for another graph than ``graph``.

    Raises
    ------
    BatchError
        If the file records no graph, or one with other counts or another sha256.
    """
    if any(key not in params for key in MADE_FOR):
        raise BatchError(f"{path}: records no graph it was made for (written by an older dynpr); "
                         "make it again (dynpr batch, or rerun snakemake)")
    recorded = (params["graph_vertices"], params["graph_edges"], params["graph_sha256"])
    if recorded != (graph.num_vertices, graph.num_edges, graph.sha256):
        raise BatchError(f"{path}: made for a graph of {recorded[0]} vertices and {recorded[1]} edges "
                         f"(sha256 {str(recorded[2])[:16]}...), not {graph_name} ({graph.num_vertices} vertices, "
                         f"{graph.num_edges} edges); make the batches for {graph_name}")


def check_batch(batch, num_vertices: int, what: str = "batch") -> None:
    """Check that every id of a batch (a :class:`dynpr.batches.Batch`) is below ``num_vertices``.

    Raises
    ------
    BatchError
    """
    for name in ("del_src", "del_dst", "ins_src", "ins_dst"):
        try:
            check_ids(f"{what} {name}", getattr(batch, name), num_vertices)
        except InputError as err:
            raise BatchError(str(err)) from None


def check_ranks(ranks, num_vertices: int, name: str) -> np.ndarray:
    """A float64 copy of ``ranks`` (the caller's array is never modified), after :func:`check_rank_values`.

    Raises
    ------
    InputError
    """
    check_rank_values(ranks, num_vertices, name)
    return np.array(ranks, dtype=np.float64)


def check_rank_values(ranks, num_vertices: int, name: str) -> None:
    """Refuse ``ranks`` unless numbers shaped ``(num_vertices,)``, finite and non-negative (no copy).

    Raises
    ------
    InputError
    """
    if ranks is None:
        raise InputError(f"{name} is required for this approach")
    xp = array_module(ranks)  # device ranks are checked on the device
    array = xp.asarray(ranks)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise InputError(f"{name} must hold numbers, not {array.dtype}")
    if array.shape != (num_vertices,):
        raise InputError(f"{name} must have shape ({num_vertices},), got {array.shape}")
    if array.size and not (bool(xp.isfinite(array).all()) and float(array.min()) >= 0):
        raise InputError(f"{name} must be finite and non-negative")



def finite_number(name: str, value, *, low: float | None = None, high: float | None = None,
                  low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float, refused unless finite and inside the given bounds.

    Raises
    ------
    InputError
        Naming ``name`` (a flag or config key) and the allowed range.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a number, got {value!r}") from None
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if not math.isfinite(number) or below or above:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        interval = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise InputError(f"{name}: must be a finite number in {interval}, got {value!r}")
    return number


# --------------------------------------------------------------------------- config


def yaml_error_line(err) -> str:
    """A YAML parse error (PyYAML prints several lines) in one line: ``line L, column C: problem``."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or (str(err).splitlines() or [type(err).__name__])[0]
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else problem


def load_yaml(path: str | Path, what: str):
    """A YAML file's content, or one :class:`InputError` line naming the file, line and problem
    (also for a key given twice in one mapping).

    Parameters
    ----------
    path : str or Path
    what : str
        What the file is, for the message (``"config"``).
    """
    import yaml

    try:
        with open(path) as fh:
            return yaml.load(fh, Loader=_unique_keys_loader())
    except yaml.YAMLError as err:
        raise InputError(f"{path}: {what} is not valid YAML: {yaml_error_line(err)}") from None


def _unique_keys_loader():
    """PyYAML's safe loader refusing a mapping key given twice: it would keep the last silently, so
    a second ``repeat:`` below the first overrides it with nothing said."""
    import yaml

    class UniqueKeysLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, Hashable):
                    continue  # the safe loader names an unhashable key itself
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} given twice (first on line {seen[key] + 1}): the second would "
                        "silently override the first", key_node.start_mark)
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep)

    return UniqueKeysLoader


def check_schema(data, schema: dict, source: str) -> None:
    """Validate ``data`` against a JSON Schema; on failure one line naming the key and only what is wrong
    (an unknown key by its name, not the whole schema).

    Raises
    ------
    InputError
        ``<source>: <key path>: <message>``.
    """
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "top level"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "..."
        raise InputError(f"{source}: {where}: {message}")


def check_config_values(config, schema: dict, source: str = "config") -> None:
    """What JSON Schema lets through in a config: NaN and infinities, and floats where integers belong.

    JSON Schema compares NaN with no bound (so ``batch_fractions: [.nan]``
    passes ``exclusiveMinimum: 0``) and counts ``2.0`` as an integer; both
    would fail far from the config later. Run after schema validation.

    Parameters
    ----------
    config : mapping
        The loaded config.
    schema : dict
        The config's JSON Schema (``$ref``s into ``$defs`` are followed).
    source : str
        Names the config in messages.

    Raises
    ------
    InputError
        Naming the key path, e.g. ``config: temporal.batch_fractions[0]: must be a finite number, got nan``.
    """
    defs = schema.get("$defs", {})

    def walk(value, node: dict, where: str) -> None:
        if "$ref" in node:
            node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{source}: {where}: must be a finite number, got {value}")
        types = node.get("type")
        types = [types] if isinstance(types, str) else (types or [])
        if "integer" in types and "number" not in types and isinstance(value, float):
            raise InputError(f"{source}: {where}: must be an integer, got {value}")
        if isinstance(value, dict):
            properties = node.get("properties", {})
            extra = node.get("additionalProperties")
            for key, item in value.items():
                child = properties.get(key, extra if isinstance(extra, dict) else {})
                walk(item, child, f"{where}.{key}" if where else str(key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, node.get("items", {}) if isinstance(node.get("items"), dict) else {}, f"{where}[{i}]")

    walk(config, schema, "")
