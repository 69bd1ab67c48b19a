"""A fresh GPU machine spends seconds compiling kernels on first use: one line says so."""

from __future__ import annotations

import time

import pytest

from dynpr.backend import gpu_available
from dynpr.gpu import loader


class _SlowModule:
    """Stands in for cupy.RawModule: building takes ``delay`` seconds."""

    delay = 0.0

    def __init__(self, **_kwargs):
        time.sleep(self.delay)

    def get_function(self, name):
        return name


class _FakeCupy:
    RawModule = _SlowModule


@pytest.mark.parametrize("delay, announced", [(0.5, True), (0.0, False)])
def test_slow_module_build_is_announced_with_the_cache(monkeypatch, caplog, tmp_path, delay, announced):
    monkeypatch.setattr(loader, "require_cupy", lambda: _FakeCupy)
    monkeypatch.setattr(loader, "inline_source", lambda name: "")
    monkeypatch.setattr(loader, "COMPILE_NOTICE_S", 0.1)
    monkeypatch.setattr(_SlowModule, "delay", delay)
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path))
    with caplog.at_level("INFO", logger="dynpr.gpu"):
        kernels = loader.module.__wrapped__("x.cu", (), ("k",))
    assert kernels["k"] == "k"
    lines = [r.getMessage() for r in caplog.records if r.name == "dynpr.gpu"]
    assert lines == ([f"compiling GPU kernels of x.cu (first use, cached in {tmp_path})"] if announced else [])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
def test_first_compile_on_the_device_is_announced(monkeypatch, caplog, tmp_path):
    # A source no other test builds (it names this test's folder): neither CuPy's disk cache nor
    # the one it keeps in the process holds it, so NVRTC compiles whatever ran before.
    sources = tmp_path / "kernels"
    sources.mkdir()
    (sources / "notice.cu").write_text(f'// {tmp_path}\nextern "C" __global__ void notice() {{}}\n')
    monkeypatch.setenv("DYNPR_KERNELS", str(sources))
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "COMPILE_NOTICE_S", 0.01)  # however fast this device compiles
    with caplog.at_level("INFO", logger="dynpr.gpu"):
        loader.module.__wrapped__("notice.cu", (), ("notice",))
    assert any(r.getMessage().startswith("compiling GPU kernels of notice.cu") for r in caplog.records)


def test_build_seconds_count_each_module_build(monkeypatch, tmp_path):
    monkeypatch.setattr(loader, "require_cupy", lambda: _FakeCupy)
    monkeypatch.setattr(loader, "inline_source", lambda name: "")
    monkeypatch.setattr(_SlowModule, "delay", 0.2)
    monkeypatch.setattr(loader, "_BUILD_SECONDS", {})
    loader.module.__wrapped__("a.cu", (), ("k",))
    loader.module.__wrapped__("b.cu", (), ("k",))
    assert 0.4 <= loader.build_seconds() < 2.0


def test_modules_build_at_once_each_on_its_own_thread(monkeypatch):
    monkeypatch.setattr(loader, "require_cupy", lambda: _FakeCupy)
    built = []

    def builder(name):
        def build():
            time.sleep(0.3)  # as NVRTC, it lets the other threads run
            built.append(name)
        return build

    wall = loader.build_modules(tuple(builder(n) for n in "abcde"))
    assert sorted(built) == list("abcde")
    assert 0.3 <= wall < 1.2  # overlapped: five builds of 0.3 s in about one's time


def test_a_failed_build_is_the_callers_error(monkeypatch):
    monkeypatch.setattr(loader, "require_cupy", lambda: _FakeCupy)

    def broken():
        raise FileNotFoundError("CUDA source kernels/x.cu not found")

    with pytest.raises(FileNotFoundError, match="x.cu not found"):
        loader.build_modules((broken,))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")
def test_after_build_modules_a_run_finds_every_module_built():
    loader.build_modules()
    for build in loader.RUN_MODULES:
        started = time.perf_counter()
        build()
        assert time.perf_counter() - started < 0.05, build.__name__  # the process's own cache, no build
