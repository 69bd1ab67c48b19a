"""Downloads against a local HTTP server on 127.0.0.1: mirror, retries, resume, bad responses."""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import socket
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dynpr.io.catalog import load_catalog
from dynpr.io.download import (DownloadError, InterruptedDownloadError, download, fetch_dataset, make_session,
                            mirrored_source, resolve_mirror)

UPSTREAM = "https://snap.stanford.edu/data/"
GOOD = gzip.compress("".join(f"{i} {i * 7 % 1000}\n" for i in range(50000)).encode())
SHA = hashlib.sha256(GOOD).hexdigest()


class Handler(BaseHTTPRequestHandler):
    """Serves ``server.routes[path]``: dict(body, status, type, fail (503s first), drop (cut bodies),
    hang (bodies that stall after a third), ranges)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        self.server.requests.append((self.path, self.headers.get("Range")))
        route = self.server.routes.get(self.path)
        if route is None or route.get("status") in (403, 404):
            status = 404 if route is None else route["status"]
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if route.get("fail", 0) > 0:
            route["fail"] -= 1
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = route["body"]
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match and route.get("ranges", True):
            start = int(match.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", route.get("type", "application/octet-stream"))
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        payload = body[start:]
        if route.get("hang", 0) > 0:
            # send a third, then go silent with the connection open (a stalled transfer)
            route["hang"] -= 1
            self.wfile.write(payload[: len(payload) // 3])
            self.wfile.flush()
            time.sleep(route.get("hang_s", 3))
            self.close_connection = True
            return
        if route.get("drop", 0) > 0:
            # send a third of what remains, then close the connection mid-body
            route["drop"] -= 1
            self.wfile.write(payload[: len(payload) // 3])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(payload)


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.routes, httpd.requests = {}, []
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _get(server, tmp_path, name, route=None, **kwargs):
    if route is not None:
        server.routes[f"/data/{name}"] = route
    kwargs.setdefault("session", make_session(retries=2, backoff=0))
    kwargs.setdefault("backoff", 0)
    return download(UPSTREAM + name, tmp_path / "raw" / name, mirror=server.url, **kwargs)


def _leftovers(tmp_path):
    raw = tmp_path / "raw"
    return sorted(p.name for p in raw.iterdir()) if raw.exists() else []


def test_good_download_through_url_mirror(server, tmp_path):
    dest = _get(server, tmp_path, "good.txt.gz", {"body": GOOD}, sha256=SHA, size=len(GOOD))
    assert dest.read_bytes() == GOOD
    assert _leftovers(tmp_path) == ["good.txt.gz"]
    assert server.requests == [("/data/good.txt.gz", None)]  # upstream path appended to the mirror prefix


@pytest.mark.parametrize("status", [404, 403])
def test_http_error(server, tmp_path, status):
    with pytest.raises(DownloadError, match=rf"/data/gone.txt.gz: HTTP {status}"):
        _get(server, tmp_path, "gone.txt.gz", {"status": status})
    assert _leftovers(tmp_path) == []


def test_wrong_checksum(server, tmp_path):
    with pytest.raises(DownloadError, match="sha256 .* differs"):
        _get(server, tmp_path, "good.txt.gz", {"body": GOOD}, sha256="0" * 64)
    assert _leftovers(tmp_path) == []


def test_wrong_size(server, tmp_path):
    with pytest.raises(DownloadError, match="size"):
        _get(server, tmp_path, "good.txt.gz", {"body": GOOD}, size=len(GOOD) + 1)
    assert _leftovers(tmp_path) == []


def test_html_instead_of_gzip(server, tmp_path):
    page = b"<!DOCTYPE html>\n<html><body>Please log in</body></html>\n"
    with pytest.raises(DownloadError, match="HTML page instead of gzip"):
        _get(server, tmp_path, "page.txt.gz", {"body": page, "type": "text/html"})
    assert _leftovers(tmp_path) == []


def test_truncated_gzip(server, tmp_path):
    with pytest.raises(DownloadError, match="truncated or corrupt gzip"):
        _get(server, tmp_path, "cut.txt.gz", {"body": GOOD[: len(GOOD) // 2]})
    assert _leftovers(tmp_path) == []


def test_truncated_tar(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"x" * 200000
        info = tarfile.TarInfo("g/g.mtx")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    body = buf.getvalue()
    assert _get(server, tmp_path, "ok.tar.gz", {"body": body}).read_bytes() == body
    with pytest.raises(DownloadError, match="truncated or corrupt tar.gz"):
        _get(server, tmp_path, "g.tar.gz", {"body": body[: len(body) - 30]})
    assert _leftovers(tmp_path) == ["ok.tar.gz"]


def test_interrupted_download_resumes_with_range(server, tmp_path):
    dest = _get(server, tmp_path, "good.txt.gz", {"body": GOOD, "drop": 2}, sha256=SHA)
    assert dest.read_bytes() == GOOD
    ranges = [r for _, r in server.requests]
    assert ranges[0] is None and len(ranges) == 3
    assert all(re.fullmatch(r"bytes=\d+-", r) for r in ranges[1:])
    assert int(ranges[1][6:-1]) > 0 and int(ranges[2][6:-1]) > int(ranges[1][6:-1])
    assert _leftovers(tmp_path) == ["good.txt.gz"]


def test_server_ignoring_range_restarts(server, tmp_path):
    dest = _get(server, tmp_path, "good.txt.gz", {"body": GOOD, "drop": 1, "ranges": False}, sha256=SHA)
    assert dest.read_bytes() == GOOD


def test_giving_up_keeps_part_and_next_run_resumes(server, tmp_path):
    route = {"body": GOOD, "drop": 100}
    with pytest.raises(InterruptedDownloadError, match="interrupted|incomplete"):
        _get(server, tmp_path, "good.txt.gz", route, resumes=1)
    assert _leftovers(tmp_path) == ["good.txt.gz.part"]  # never at the final path
    kept = (tmp_path / "raw/good.txt.gz.part").stat().st_size
    route["drop"] = 0
    server.requests.clear()
    assert _get(server, tmp_path, "good.txt.gz", sha256=SHA).read_bytes() == GOOD
    assert server.requests == [("/data/good.txt.gz", f"bytes={kept}-")]


def test_retries_5xx(server, tmp_path):
    dest = _get(server, tmp_path, "good.txt.gz", {"body": GOOD, "fail": 2})
    assert dest.read_bytes() == GOOD
    assert len(server.requests) == 3


def test_5xx_beyond_retries(server, tmp_path):
    with pytest.raises(DownloadError, match="HTTP 503"):
        _get(server, tmp_path, "good.txt.gz", {"body": GOOD, "fail": 10})
    assert _leftovers(tmp_path) == []


def test_unreachable_host(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(DownloadError, match=rf"127.0.0.1:{port}/data/x.txt.gz: cannot connect"):
        download(UPSTREAM + "x.txt.gz", tmp_path / "raw/x.txt.gz", mirror=f"http://127.0.0.1:{port}",
                 session=make_session(retries=1, backoff=0), connect_timeout=2, stall=2)
    assert _leftovers(tmp_path) == []


def test_local_folder_mirror(tmp_path):
    folder = tmp_path / "mirror" / "snap"
    folder.mkdir(parents=True)
    (folder / "good.txt.gz").write_bytes(GOOD)
    assert mirrored_source(UPSTREAM + "good.txt.gz", str(tmp_path / "mirror")) == folder / "good.txt.gz"
    dest = download(UPSTREAM + "good.txt.gz", tmp_path / "raw/good.txt.gz", mirror=str(tmp_path / "mirror"), sha256=SHA)
    assert dest.read_bytes() == GOOD
    with pytest.raises(DownloadError, match="has no file named other.txt.gz"):
        download(UPSTREAM + "other.txt.gz", tmp_path / "raw/other.txt.gz", mirror=str(tmp_path / "mirror"))
    (folder / "bad.txt.gz").write_bytes(GOOD[:100])
    with pytest.raises(DownloadError, match="truncated"):
        download(UPSTREAM + "bad.txt.gz", tmp_path / "raw/bad.txt.gz", mirror=str(tmp_path / "mirror"))
    assert _leftovers(tmp_path) == ["good.txt.gz"]


def test_env_mirror_overrides_config(monkeypatch):
    monkeypatch.delenv("DYNPR_MIRROR", raising=False)
    assert resolve_mirror("http://config") == "http://config"
    assert resolve_mirror(None) is None
    monkeypatch.setenv("DYNPR_MIRROR", "http://env")
    assert resolve_mirror("http://config") == "http://env"
    assert mirrored_source(UPSTREAM + "a.txt.gz", "http://env/") == "http://env/data/a.txt.gz"


def test_embedded_dataset_needs_no_network(monkeypatch):
    monkeypatch.setenv("DYNPR_MIRROR", "http://127.0.0.1:9")  # would fail if contacted
    ds = load_catalog()["CollegeMsg"]
    assert fetch_dataset(ds) == ds.embedded


def test_progress_lines_for_large_files(server, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr("dynpr.io.download.PROGRESS_BYTES", 1000)
    monkeypatch.setattr("dynpr.io.download.CHUNK", 4096)
    with caplog.at_level("INFO", logger="dynpr.io.download"):
        _get(server, tmp_path, "good.txt.gz", {"body": GOOD})
    progress = [r.getMessage() for r in caplog.records if "% of" in r.getMessage()]
    assert 5 <= len(progress) <= 11 and progress[-1].startswith("good.txt.gz: 100.0% of")


def test_server_always_breaking_off_and_ignoring_range_ends(server, tmp_path):
    """Each pass restarts from byte 0 and makes progress, so only the total attempt bound ends it."""
    route = {"body": GOOD, "drop": 10**6, "ranges": False}
    with pytest.raises(InterruptedDownloadError, match="still incomplete after 4 attempts"):
        _get(server, tmp_path, "good.txt.gz", route, max_attempts=4)
    assert len(server.requests) == 4
    assert not (tmp_path / "raw/good.txt.gz").exists()


def test_total_deadline_ends_a_download(server, tmp_path):
    route = {"body": GOOD, "drop": 10**6, "ranges": False}
    with pytest.raises(InterruptedDownloadError, match="deadline"):
        _get(server, tmp_path, "good.txt.gz", route, max_attempts=10**6, deadline=0.5)
    assert not (tmp_path / "raw/good.txt.gz").exists()


def test_silent_server_fails_within_the_stall_limit_with_waiting_lines(tmp_path, monkeypatch, caplog):
    """A server that accepts connections and never answers: one bounded wait, reported while it lasts."""
    monkeypatch.setattr("dynpr.io.download.WAIT_REPORT", 0.2)
    with socket.socket() as sock:  # listens (the kernel accepts), never reads or answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        port = sock.getsockname()[1]
        started = time.monotonic()
        with caplog.at_level("INFO", logger="dynpr.io.download"), \
                pytest.raises(DownloadError, match=rf"127.0.0.1:{port}/data/x.txt.gz: cannot connect or no answer"):
            download(UPSTREAM + "x.txt.gz", tmp_path / "raw/x.txt.gz", mirror=f"http://127.0.0.1:{port}",
                     session=make_session(retries=1, backoff=0), connect_timeout=2, stall=1)
        assert time.monotonic() - started < 10
    assert any("waiting for data: nothing for" in r.getMessage() and r.levelname == "WARNING"
               for r in caplog.records)  # shown off a terminal too, where info lines are not
    assert _leftovers(tmp_path) == []


def test_stalled_transfer_is_detected_and_resumed(server, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr("dynpr.io.download.WAIT_REPORT", 0.2)
    monkeypatch.setattr("dynpr.io.download.CHUNK", 4096)  # bytes reach the .part file as they arrive
    started = time.monotonic()
    with caplog.at_level("INFO", logger="dynpr.io.download"):
        dest = _get(server, tmp_path, "good.txt.gz", {"body": GOOD, "hang": 1, "hang_s": 5}, sha256=SHA, stall=1)
    assert dest.read_bytes() == GOOD
    assert time.monotonic() - started < 4  # the stall limit, not the server, ended the first attempt
    assert [r for _, r in server.requests][1].startswith("bytes=")  # resumed where it stalled
    assert any("waiting for data: nothing for" in r.getMessage() for r in caplog.records)


def test_failed_download_leaves_no_folder_behind(server, tmp_path):
    with pytest.raises(DownloadError, match="HTTP 404"):
        _get(server, tmp_path, "missing.txt.gz", {"status": 404})
    assert not (tmp_path / "raw").exists()  # not even the empty folder it made
    (tmp_path / "raw").mkdir()
    with pytest.raises(DownloadError):
        _get(server, tmp_path, "missing.txt.gz", {"status": 404})
    assert (tmp_path / "raw").is_dir()  # a folder that was there stays


def test_unresolvable_host_is_reported_at_once(tmp_path, monkeypatch):
    import socket

    def no_dns(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"^https://snap.example/x.txt.gz: cannot resolve the host snap.example "
                                            r"\(Name or service not known\); check the network"):
        download("https://snap.example/x.txt.gz", tmp_path / "raw" / "x.txt.gz", session=make_session(backoff=1))
    assert time.monotonic() - started < 1
    assert not (tmp_path / "raw").exists()
