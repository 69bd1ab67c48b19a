"""A regular install (wheel) carries what the CLI needs by catalog name: catalog, embedded graphs, schemas."""

from __future__ import annotations

import glob
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from dynpr.io import catalog


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


def test_library_and_cli_never_import_snakemake():
    """Snakemake is the workflow extra's: every module of dynpr and a whole CLI run do without it."""
    import subprocess
    import sys

    code = ("import pkgutil, importlib, sys, dynpr, dynpr.cli\n"
            "for m in pkgutil.walk_packages(dynpr.__path__, 'dynpr.'):\n"
            "    if m.name.endswith('__main__'): continue\n"
            "    try: importlib.import_module(m.name)\n"
            "    except ImportError as err:\n"
            "        if 'cupy' not in str(err): raise\n"
            "dynpr.cli.main(['kahn', 'CollegeMsg', '--backend', 'cpu'])\n"
            "print(sorted(n for n in sys.modules if n.split('.')[0] == 'snakemake'))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_cpu_environments_need_no_cuda_and_snakemake_is_the_workflow_extra(repo_root):
    """environment.yml and the CPU rule environment build without CUDA (macOS); CuPy comes from the GPU
    files only; pip users get Snakemake from the workflow extra, which test and slurm include."""
    import yaml

    def packages(relative):
        deps = yaml.safe_load((repo_root / relative).read_text())["dependencies"]
        return {d.split(">")[0].split("=")[0].split("<")[0].strip() for d in deps if isinstance(d, str)}
    for cpu in ("environment.yml", "workflow/envs/dynpr.yaml"):
        assert not packages(cpu) & {"cupy", "cuda-version"}, cpu
    for gpu in ("environment-gpu.yml", "workflow/envs/dynpr-gpu.yaml"):
        assert {"cupy", "cuda-version"} <= packages(gpu), gpu
    with open(repo_root / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert not any(d.startswith("snakemake") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(d.startswith("snakemake>=") for d in extras["workflow"])
    assert "dynpr[workflow]" in extras["test"] and "dynpr[workflow]" in extras["slurm"]
    readme = (repo_root / "README.md").read_text()
    assert "pip install -e '.[workflow]' && snakemake --cores 1 figures" in readme
