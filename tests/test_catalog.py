"""The dataset catalog: schema validation, contents, embedded copies, config schema."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from dynpr.io.catalog import CatalogError, UnknownDatasetError, get_dataset, load_catalog

TABLE3 = ["sx-mathoverflow", "sx-askubuntu", "sx-superuser", "wiki-talk-temporal", "sx-stackoverflow"]
TABLE4 = {
    "indochina-2004": "LAW", "arabic-2005": "LAW", "uk-2005": "LAW", "webbase-2001": "LAW",
    "it-2004": "LAW", "sk-2005": "LAW", "com-LiveJournal": "SNAP", "com-Orkut": "SNAP",
    "asia_osm": "DIMACS10", "europe_osm": "DIMACS10", "kmer_A2a": "GenBank", "kmer_V1r": "GenBank",
}
EXTRA = ["CollegeMsg", "email-Eu-core-temporal", "web-NotreDame", "soc-Epinions1", "soc-Slashdot0902"]


def test_catalog_lists_every_paper_graph():
    catalog = load_catalog()
    for name in TABLE3:
        ds = catalog[name]
        assert ds.kind == "temporal" and ds.format == "snap-temporal"
        assert ds.url == f"https://snap.stanford.edu/data/{name}.txt.gz"
        assert ds.temporal_edges > ds.edges > 0 and ds.vertices > 0
    for name, group in TABLE4.items():
        ds = catalog[name]
        assert ds.kind == "static" and ds.format == "suitesparse-mm"
        assert ds.url == f"https://suitesparse-collection-website.herokuapp.com/MM/{group}/{name}.tar.gz"
        assert ds.raw_path.as_posix() == f"datasets/raw/{name}.tar.gz"
    for name in EXTRA:
        assert catalog[name].url == f"https://snap.stanford.edu/data/{name}.txt.gz"
    generated = [ds for ds in catalog.values() if ds.kind == "generated"]
    assert {ds.name for ds in generated} >= {"rmat-16", "rmat-20", "rmat-22"}
    for ds in generated:
        assert ds.source_path is None and ds.vertices == 2**ds.scale and ds.edge_factor in (3, 16, 28, 32)


def test_embedded_copies_match_sha256sums(repo_root):
    sums = dict(line.split()[::-1] for line in (repo_root / "datasets/embedded/SHA256SUMS").read_text().splitlines())
    embedded = [ds for ds in load_catalog().values() if ds.embedded is not None]
    assert {ds.embedded.name for ds in embedded} == set(sums)
    for ds in embedded:
        data = (repo_root / ds.embedded).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sums[ds.embedded.name] == ds.sha256
        assert len(data) == ds.size
        assert ds.source_path == ds.embedded


def test_unknown_dataset_lists_known_names():
    with pytest.raises(KeyError) as info:
        get_dataset("no-such-graph")
    assert isinstance(info.value, UnknownDatasetError)
    assert "no-such-graph" in str(info.value) and "CollegeMsg" in str(info.value)


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d["datasets"]["CollegeMsg"].pop("url"), "url"),
    (lambda d: d["datasets"]["CollegeMsg"].update(kind="dynamic"), "kind"),
    (lambda d: d["datasets"]["CollegeMsg"].pop("temporal_edges"), "temporal_edges"),
    (lambda d: d["datasets"]["rmat-16"].pop("scale"), "scale"),
    (lambda d: d["datasets"]["web-NotreDame"].update(sha256="xyz"), "sha256"),
    (lambda d: d["datasets"]["web-NotreDame"].update(colour="red"), "colour"),
])
def test_invalid_catalog_is_rejected_on_load(tmp_path, repo_root, mutate, where):
    data = yaml.safe_load((repo_root / "datasets/catalog.yaml").read_text())
    mutate(data)
    path = tmp_path / "datasets" / "catalog.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogError, match=where):
        load_catalog(path)


def test_catalog_paths_follow_the_catalog_location(tmp_path, repo_root):
    path = tmp_path / "datasets" / "catalog.yaml"
    path.parent.mkdir()
    shutil.copy(repo_root / "datasets/catalog.yaml", path)
    ds = load_catalog(path)["sx-askubuntu"]
    assert ds.raw_path == tmp_path / "datasets/raw/sx-askubuntu.txt.gz"


def _config_schema(repo_root):
    return yaml.safe_load((repo_root / "workflow/schemas/config.schema.yaml").read_text())


def test_config_yaml_is_valid(repo_root):
    config = yaml.safe_load((repo_root / "config.yaml").read_text())
    jsonschema.validate(config, _config_schema(repo_root))


@pytest.mark.parametrize("mutate", [
    lambda c: c.update(backend="tpu"),
    lambda c: c.update(approaches=["static", "pr"]),
    lambda c: c["pagerank"].update(alpha=1.5),
    lambda c: c["temporal"].pop("num_batches"),
    lambda c: c.update(typo_key=1),
    lambda c: c["bench"].update(repeats=0),
    lambda c: c.pop("bench"),
    lambda c: c["bench"].update(kahn_report_density=0),
    lambda c: c["bench"].update(kahn_report_sizes=[10000, 10000]),
    lambda c: c["bench"].update(kahn_report_sizes=[10000.5]),
    lambda c: c["bench"].pop("kahn_report_sizes"),
])
def test_bad_config_is_rejected(repo_root, mutate):
    config = yaml.safe_load((repo_root / "config.yaml").read_text())
    mutate(config)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(config, _config_schema(repo_root))


# Paper Tables 3-4 (rounded to 3 significant digits): |V|, |E| (Table 4 counts the added
# self-loops: |E| = nonzeros + rows - self-loops already present) and |E_T|.
PAPER_TABLE4 = {
    "indochina-2004": (7.41e6, 199e6), "arabic-2005": (22.7e6, 654e6), "uk-2005": (39.5e6, 961e6),
    "webbase-2001": (118e6, 1.11e9), "it-2004": (41.3e6, 1.18e9), "sk-2005": (50.6e6, 1.98e9),
    "com-LiveJournal": (4.00e6, 73.4e6), "com-Orkut": (3.07e6, 237e6), "asia_osm": (12.0e6, 37.4e6),
    "europe_osm": (50.9e6, 159e6), "kmer_A2a": (171e6, 531e6), "kmer_V1r": (214e6, 679e6),
}
PAPER_TABLE3 = {"sx-mathoverflow": (24.8e3, 507e3, 240e3), "sx-askubuntu": (159e3, 964e3, 597e3),
                "sx-superuser": (194e3, 1.44e6, 925e3), "wiki-talk-temporal": (1.14e6, 7.83e6, 3.31e6),
                "sx-stackoverflow": (2.60e6, 63.4e6, 36.2e6)}


def test_published_counts_agree_with_the_paper():
    catalog = load_catalog()
    for name, (vertices, edges) in PAPER_TABLE4.items():
        ds = catalog[name]
        assert ds.vertices == pytest.approx(vertices, rel=5e-3), name
        # with self-loops added the edge count lies between |E| and |E| + |V|
        assert ds.edges <= edges * 1.005 and ds.edges + ds.vertices >= edges * 0.995, name
    for name, (vertices, temporal, static) in PAPER_TABLE3.items():
        ds = catalog[name]
        assert ds.vertices == pytest.approx(vertices, rel=5e-3), name
        assert ds.temporal_edges == pytest.approx(temporal, rel=5e-3), name
        assert ds.edges == pytest.approx(static, rel=5e-3), name


# Exact counts checked against stored public pages (see the '# counts' comment of each entry in
# datasets/catalog.yaml): sparse.tamu.edu SNAP/CollegeMsg, SNAP/sx-mathoverflow, SNAP/sx-superuser,
# SNAP/sx-stackoverflow (+ konect.cc for its temporal count), SNAP/com-Orkut, the SuiteSparse
# SNAP/soc-Slashdot0902 header and konect's soc-Epinions1 page; sx-mathoverflow's temporal count only
# against the embedded file (no page text seen). (vertices, edges, temporal_edges)
PAGE_VERIFIED = {
    "CollegeMsg": (1899, 20296, 59835), "sx-mathoverflow": (24818, 239978, 506550),
    "sx-superuser": (194085, 924886, 1443339), "sx-stackoverflow": (2601977, 36233450, 63497050),
    "com-Orkut": (3072441, 234370166, None), "soc-Slashdot0902": (82168, 948464, None),
    "soc-Epinions1": (75879, 508837, None),
}


def test_page_verified_counts_are_exact():
    catalog = load_catalog()
    for name, counts in PAGE_VERIFIED.items():
        ds = catalog[name]
        assert (ds.vertices, ds.edges, ds.temporal_edges) == counts, name


def test_every_config_key_is_documented():
    root = Path(__file__).resolve().parents[1]  # tests run in a checkout
    config = yaml.safe_load((root / "config.yaml").read_text())
    keys = [f"{k}.{sub}" if isinstance(v, dict) else k for k, v in config.items()
            for sub in (v if isinstance(v, dict) else [None])]
    doc = (root / "docs" / "config.md").read_text()
    assert [k for k in keys if f"`{k}`" not in doc] == []
