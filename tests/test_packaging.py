"""A regular install (wheel) carries what the CLI needs by catalog name: catalog, embedded graphs, schemas."""

from __future__ import annotations

import glob
import shutil
import sys
import tomllib

import pytest

from dynpr import catalog


def data_files(repo_root) -> dict[str, list[str]]:
    with open(repo_root / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]["data-files"]


def test_data_files_match_files(repo_root):
    for target, patterns in data_files(repo_root).items():
        for pattern in patterns:
            assert glob.glob(str(repo_root / pattern)), f"{target}: {pattern} matches no file"


def test_catalog_found_under_prefix_without_checkout(repo_root, tmp_path, monkeypatch):
    # lay out <prefix>/share/... as pip does from data-files, then hide the checkout
    for target, patterns in data_files(repo_root).items():
        (tmp_path / target).mkdir(parents=True, exist_ok=True)
        for pattern in patterns:
            for path in glob.glob(str(repo_root / pattern)):
                shutil.copy(path, tmp_path / target)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(catalog, "repo_root", lambda: tmp_path / "no-checkout")
    ds = catalog.get_dataset("CollegeMsg", catalog.load_catalog())
    assert ds.source_path.is_file() and str(ds.source_path).startswith(str(tmp_path / "share" / "dynpr"))


def test_own_catalog_validated_against_the_installed_schema(repo_root, tmp_path, monkeypatch):
    # a catalog of the user's own, no schema beside it, no checkout: the schema under share/dynpr applies
    schemas = tmp_path / "prefix" / "share" / "dynpr" / "workflow" / "schemas"
    schemas.mkdir(parents=True)
    shutil.copy(repo_root / catalog.SCHEMA_RELATIVE, schemas)
    own = tmp_path / "mine" / "catalog.yaml"
    own.parent.mkdir()
    own.write_text((repo_root / catalog.DEFAULT_CATALOG).read_text().replace("kind: temporal", "kind: temporl", 1))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(catalog, "repo_root", lambda: tmp_path / "no-checkout")
    assert catalog.project_file(catalog.SCHEMA_RELATIVE) == schemas / "catalog.schema.yaml"
    with pytest.raises(catalog.CatalogError, match="temporl"):
        catalog.load_catalog(own)


def test_version_and_bare_usage(capsys):
    from dynpr.cli import main

    assert main([]) == 2
    assert "usage: dynpr" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("dynpr ")
