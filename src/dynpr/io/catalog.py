"""The dataset catalog: every graph dynpr can prepare, where it comes from and its published counts.

The catalog lives in ``datasets/catalog.yaml`` and is validated against
``workflow/schemas/catalog.schema.yaml`` on load, so a typo fails at start-up
rather than hours into a download.

Where the catalog gives no sha256 and size for a download (the upstream
publishes none), the first download whose prepared counts match the catalog
records them in ``datasets/catalog.lock.yaml`` (:func:`record_verified`); every
later download, on any machine that has the committed lock file, must match.
"""

from __future__ import annotations

import difflib
import fcntl
import functools
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlparse

import jsonschema
import yaml

from dynpr.errors import CatalogError, InputError, UnknownDatasetError
from dynpr.graph.validate import load_yaml, yaml_error_line

DEFAULT_CATALOG = Path("datasets/catalog.yaml")
#: sha256 and size of verified downloads, beside the catalog (commit it)
LOCK_NAME = "catalog.lock.yaml"
_LOCK_HEADER = ("# sha256 and size of downloads whose prepared counts matched datasets/catalog.yaml,\n"
                "# written by dynpr on the first verified download; commit this file so every later\n"
                "# download (on any machine) must match. Delete an entry to accept a new upstream file.\n")
SCHEMA_RELATIVE = Path("workflow/schemas/catalog.schema.yaml")


@dataclass(frozen=True)
class Dataset:
    """One catalog entry.

    Paths (``embedded``, :attr:`raw_path`) are relative to the directory the
    catalog was loaded from, e.g. ``datasets/embedded/CollegeMsg.txt.gz`` for
    the default ``datasets/catalog.yaml`` (Snakemake runs in the repository root).
    """

    name: str
    kind: str  # temporal | static | generated
    format: str  # snap-temporal | snap-edgelist | suitesparse-mm | matrix-market | rmat
    url: str | None
    sha256: str | None
    size: int | None
    vertices: int | None
    edges: int | None
    temporal_edges: int | None
    embedded: Path | None
    raw_dir: Path
    scale: int | None = None
    edge_factor: int | None = None
    seed: int | None = None
    # how a text edge list is read (dynpr.io.edge_lists.EdgeListOptions); None: found from the file
    delimiter: str | None = None
    header: bool | None = None
    labels: bool | None = None
    undirected: bool = False

    @property
    def file_name(self) -> str | None:
        """Name of the upstream file (last component of the URL), None for generated graphs."""
        if self.url is None:
            return None
        return Path(urlparse(self.url).path).name

    @property
    def raw_path(self) -> Path | None:
        """Where a download of this dataset lands (``datasets/raw/<file>``)."""
        name = self.file_name
        return None if name is None else self.raw_dir / name

    @property
    def source_path(self) -> Path | None:
        """The input file of ``prepare``: the embedded copy if any, else the raw download."""
        if self.kind == "generated":
            return None
        return self.embedded if self.embedded is not None else self.raw_path


def repo_root() -> Path:
    """The repository root of an editable install (``src/dynpr/io/../../..``)."""
    # Only an editable install has a checkout there; project_file falls back to the installed
    # copies (dynpr.gpu.loader.kernel_dir steps up to the checkout's kernels/ the same way).
    return Path(__file__).resolve().parents[3]


def project_file(relative: str | Path) -> Path:
    """A repository file the package reads (the catalog, its schemas), wherever dynpr runs.

    Parameters
    ----------
    relative : str or Path
        Path inside the repository, e.g. ``datasets/catalog.yaml``.

    Returns
    -------
    Path
        ``relative`` itself when it exists below the current directory (a run
        from the repository root), else the copy in the checkout of an editable
        install, else ``<prefix>/share/dynpr/<relative>``, where pyproject's
        data-files put the catalog, its embedded graphs and the schemas on a
        regular install (that path may not exist; its reader says so).
    """
    relative = Path(relative)
    if relative.is_file():
        return relative
    checkout = repo_root() / relative
    return checkout if checkout.is_file() else Path(sys.prefix) / "share" / "dynpr" / relative


def _read_lock(path: Path) -> dict[str, dict]:
    """``{file name: {"sha256": ..., "size": ...}}`` from a lock file ({} when there is none)."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise CatalogError(f"{path}: not valid YAML ({yaml_error_line(err)}); delete it: dynpr writes it "
                           "again as downloads are verified") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("sha256"), str) and len(v["sha256"]) == 64
            and isinstance(v.get("size"), int) and v["size"] >= 0 for v in files.values()):
        raise CatalogError(f"{path}: expected 'files: {{<file name>: {{sha256: <64 hex>, size: <bytes>}}}}'; "
                           "delete it: dynpr writes it again as downloads are verified")
    return files


def _with_lock(catalog: dict[str, "Dataset"], lock_file: Path, catalog_file: Path) -> dict[str, "Dataset"]:
    locked = _read_lock(lock_file)
    for name, ds in catalog.items():
        entry = locked.get(ds.file_name) if ds.file_name else None
        if entry is None:
            continue
        for key in ("sha256", "size"):
            if getattr(ds, key) is not None and getattr(ds, key) != entry[key]:
                raise CatalogError(f"{lock_file}: {ds.file_name} {key} {entry[key]} differs from {catalog_file}'s "
                                   f"{getattr(ds, key)} for {name}; delete the lock entry or fix the catalog")
        catalog[name] = replace(ds, sha256=ds.sha256 or entry["sha256"],
                                size=ds.size if ds.size is not None else entry["size"])
    return catalog


def record_verified(dataset: "Dataset", path: str | Path, sha256: str) -> None:
    """Record a verified download's sha256 and size in the lock file beside the catalog.

    Called once the file's prepared counts matched the catalog. Nothing is
    written when the catalog (or the lock) already knows the checksum.
    """
    if dataset.sha256 is not None or dataset.file_name is None:
        return
    lock_file = dataset.raw_dir.parent / LOCK_NAME
    from dynpr.graph.atomic_files import write_text_atomic

    # several prepare jobs may record at once: serialise the read-modify-write
    with open(lock_file.with_name(f".{LOCK_NAME}.lock"), "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        files = _read_lock(lock_file)
        files[dataset.file_name] = {"sha256": sha256, "size": Path(path).stat().st_size}
        body = yaml.safe_dump({"files": dict(sorted(files.items()))}, sort_keys=True)
        write_text_atomic(lock_file, _LOCK_HEADER + body)


@functools.lru_cache(maxsize=8)
def _load(path: Path, _key: tuple) -> dict[str, Dataset]:
    if not path.is_file():
        raise CatalogError(f"{path}: dataset catalog not found; run from the repository root")
    try:
        data = load_yaml(path, "dataset catalog")
    except InputError as err:
        raise CatalogError(str(err)) from None
    # the schema beside the catalog (a checkout, or share/dynpr), else the package's own
    schema_path = path.resolve().parent.parent / SCHEMA_RELATIVE
    if not schema_path.is_file():
        schema_path = project_file(SCHEMA_RELATIVE)
    with open(schema_path) as fh:
        schema = yaml.safe_load(fh)
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "<top>"
        raise CatalogError(f"{path}: {where}: {err.message}") from None
    base = path.parent
    catalog = {}
    for name, entry in data["datasets"].items():
        embedded = entry.get("embedded")
        catalog[name] = Dataset(
            name=name,
            kind=entry["kind"],
            format=entry["format"],
            url=entry.get("url"),
            sha256=entry.get("sha256"),
            size=entry.get("size"),
            vertices=entry.get("vertices", 2 ** entry["scale"] if "scale" in entry else None),
            edges=entry.get("edges"),
            temporal_edges=entry.get("temporal_edges"),
            embedded=None if embedded is None else base / "embedded" / embedded,
            raw_dir=base / "raw",
            scale=entry.get("scale"),
            edge_factor=entry.get("edge_factor"),
            seed=entry.get("seed"),
            delimiter=entry.get("delimiter"),
            header=entry.get("header"),
            labels=entry.get("labels"),
            undirected=entry.get("undirected", False),
        )
    return _with_lock(catalog, base / LOCK_NAME, path)


def load_catalog(path: str | Path | None = None) -> dict[str, Dataset]:
    """Read and validate the dataset catalog.

    Parameters
    ----------
    path : str or Path, optional
        Catalog file; defaults to ``datasets/catalog.yaml`` (in the current
        directory, else in the repository the package was installed from).

    Returns
    -------
    dict of str to Dataset
        Entries in catalog order.

    Raises
    ------
    CatalogError
        If the file is missing or fails schema validation.
    """
    path = project_file(DEFAULT_CATALOG) if path is None else Path(path)
    # the cache key includes the working directory (paths are relative) and the
    # file's mtime, so an edited catalog is re-read and re-validated
    mtime = path.stat().st_mtime_ns if path.is_file() else None
    lock = path.parent / LOCK_NAME
    lock_mtime = lock.stat().st_mtime_ns if lock.is_file() else None
    return dict(_load(path, (str(Path.cwd()), mtime, lock_mtime)))


def get_dataset(name: str, catalog: dict[str, Dataset] | str | Path | None = None) -> Dataset:
    """Look up one dataset by name.

    Parameters
    ----------
    name : str
        Catalog name, e.g. ``"CollegeMsg"``.
    catalog : dict or path, optional
        A loaded catalog or a catalog path; default :func:`load_catalog`'s.

    Raises
    ------
    UnknownDatasetError
        (a ``KeyError``) naming the unknown dataset and listing the known ones.
    """
    if not isinstance(catalog, dict):
        catalog = load_catalog(catalog)
    try:
        return catalog[name]
    except KeyError:
        by_case = {known.lower(): known for known in catalog}
        close = difflib.get_close_matches(name.lower(), list(by_case), n=1, cutoff=0.6)
        hint = f"did you mean {by_case[close[0]]!r}? " if close else ""
        raise UnknownDatasetError(
            f"unknown dataset {name!r}; {hint}known datasets: {', '.join(sorted(catalog))} "
            "(add it to datasets/catalog.yaml)"
        ) from None


def dataset_for_file(file_name: str, catalog: dict[str, Dataset] | None = None) -> Dataset:
    """The downloadable dataset whose upstream file is named ``file_name``.

    Raises
    ------
    UnknownDatasetError
        If no catalog entry with a URL has that file name.
    """
    catalog = load_catalog() if catalog is None else catalog
    for ds in catalog.values():
        if ds.file_name == file_name:
            return ds
    known = sorted(ds.file_name for ds in catalog.values() if ds.file_name)
    raise UnknownDatasetError(f"no catalog dataset downloads a file named {file_name!r}; known files: {', '.join(known)}")
