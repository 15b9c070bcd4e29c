"""Downloader against a loopback server: success, resume, errors, retries, offline."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from iree_conformance.frontends.onnx.download import (
    Downloader,
    DownloadError,
    DownloadSkipped,
    RetryPolicy,
    is_partial_name,
)
from iree_conformance.frontends.onnx.progress import LineProgress, NullProgress
from tests.support.onnx_testlib import LoopbackServer, assert_cache_holds_only, sha256, unused_port

BODY = bytes(range(256)) * 4096  # 1 MiB, several chunks' worth of distinct bytes
SHA = sha256(BODY)


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def downloader(**kw: object) -> Downloader:
    kw.setdefault("sleep", Sleeps())
    kw.setdefault("progress", NullProgress)
    kw.setdefault("timeout", (2.0, 5.0))
    return Downloader(**kw)  # type: ignore[arg-type]


def test_good_download(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY)
    dest = downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert dest.read_bytes() == BODY
    assert_cache_holds_only(tmp_path, {"m.onnx": SHA})
    # A second fetch keeps the verified file and makes no request.
    before = len(server.requests)
    downloader().fetch(url, dest, sha256=SHA, size=len(BODY))
    assert len(server.requests) == before


def test_resume_after_cut_connection(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY, cut_after=300_000)
    sleeps = Sleeps()
    dest = downloader(sleep=sleeps).fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert dest.read_bytes() == BODY
    assert server.requests[0] == ("/m.onnx", None, 200)
    path, range_header, status = server.requests[1]
    assert status == 206
    resumed_at = int(range_header.removeprefix("bytes=").rstrip("-"))
    assert 0 < resumed_at <= 300_000
    assert sleeps.calls == [1.0]
    assert_cache_holds_only(tmp_path, {"m.onnx": SHA})


def test_resume_when_server_ignores_range_restarts(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY, cut_after=200_000, ranges=False)
    dest = downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert dest.read_bytes() == BODY
    assert [s for _, _, s in server.requests] == [200, 200]
    assert server.requests[1][1] is not None  # a Range was asked, a full 200 answered
    assert_cache_holds_only(tmp_path, {"m.onnx": SHA})


def test_404_fails_at_once_and_names_url(server: LoopbackServer, tmp_path: Path) -> None:
    sleeps = Sleeps()
    url = server.url("missing.onnx")
    with pytest.raises(DownloadError, match=r"missing\.onnx: HTTP 404"):
        downloader(sleep=sleeps).fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert len(server.requests) == 1 and sleeps.calls == []
    assert_cache_holds_only(tmp_path, {})


def test_503_then_success_backs_off(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY, statuses=[503, 502])
    sleeps = Sleeps()
    downloader(sleep=sleeps).fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert [s for _, _, s in server.requests] == [503, 502, 200]
    assert sleeps.calls == [1.0, 2.0]
    assert_cache_holds_only(tmp_path, {"m.onnx": SHA})


def test_persistent_503_gives_up_after_bounded_attempts(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("m.onnx", BODY, statuses=[503] * 10)
    sleeps = Sleeps()
    with pytest.raises(DownloadError, match="gave up after 3 attempts.*HTTP 503"):
        downloader(sleep=sleeps, retry=RetryPolicy(attempts=3)).fetch(
            url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY)
        )
    assert len(server.requests) == 3 and sleeps.calls == [1.0, 2.0]
    assert_cache_holds_only(tmp_path, {})


def test_wrong_sha256_says_what_was_served(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY)
    wrong = "0" * 64
    with pytest.raises(DownloadError) as info:
        downloader().fetch(url, tmp_path / "m.onnx", sha256=wrong, size=len(BODY))
    message = str(info.value)
    assert url in message and SHA in message and wrong in message
    assert_cache_holds_only(tmp_path, {})


def test_truncated_file_is_rejected(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY[:-1000])
    with pytest.raises(
        DownloadError, match=f"served {len(BODY) - 1000} bytes.*expected {len(BODY)}"
    ):
        downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert_cache_holds_only(tmp_path, {})


def test_oversized_file_is_cut_short(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY + BODY)
    with pytest.raises(DownloadError, match="more than the expected"):
        downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert_cache_holds_only(tmp_path, {})


def test_slow_server_times_out(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY, delay=1.0)
    sleeps = Sleeps()
    with pytest.raises(DownloadError, match="gave up after 2 attempts"):
        downloader(sleep=sleeps, timeout=(2.0, 0.2), retry=RetryPolicy(attempts=2)).fetch(
            url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY)
        )
    assert sleeps.calls == [1.0]
    assert_cache_holds_only(tmp_path, {})


def test_offline_flag_skips_without_request(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY)
    with pytest.raises(DownloadSkipped) as info:
        downloader(offline=True).fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert info.value.reason == "offline"
    assert server.requests == []
    assert_cache_holds_only(tmp_path, {})


def test_offline_flag_still_uses_the_cache(tmp_path: Path) -> None:
    (tmp_path / "m.onnx").write_bytes(BODY)
    dest = downloader(offline=True).fetch(
        "http://127.0.0.1:1/m.onnx", tmp_path / "m.onnx", sha256=SHA, size=len(BODY)
    )
    assert dest.read_bytes() == BODY


def test_unreachable_host_counts_as_offline(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{unused_port()}/m.onnx"
    sleeps = Sleeps()
    with pytest.raises(DownloadSkipped) as info:
        downloader(sleep=sleeps).fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert info.value.reason.startswith("offline")
    assert len(sleeps.calls) == 1  # connect failures give up after RetryPolicy.connect_attempts
    assert_cache_holds_only(tmp_path, {})


def test_local_mirror_file_is_verified(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "m.onnx").write_bytes(BODY)
    cache = tmp_path / "cache"
    dest = downloader(offline=True).fetch(
        (mirror / "m.onnx").as_uri(), cache / "m.onnx", sha256=SHA, size=len(BODY)
    )
    assert dest.read_bytes() == BODY
    (mirror / "bad.onnx").write_bytes(BODY[:10])
    with pytest.raises(DownloadError, match="served 10 bytes"):
        downloader().fetch(str(mirror / "bad.onnx"), cache / "b.onnx", sha256=SHA, size=len(BODY))
    assert_cache_holds_only(cache, {"m.onnx": SHA})


def test_progress_lines_in_logs(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("m.onnx", BODY)
    stream = io.StringIO()
    downloader(progress=lambda: LineProgress(stream, interval=0.0)).fetch(
        url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY)
    )
    lines = stream.getvalue().splitlines()
    assert lines[0] == "downloading m.onnx: 1.0 MB"
    assert lines[-1] == "  m.onnx: done at 1.0 MB"
    assert "\r" not in stream.getvalue()


def test_partial_names_are_recognisable() -> None:
    assert is_partial_name(".m.onnx.part-0123456789ab")
    assert not is_partial_name("m.onnx")


# -- file:// URLs with each OS's path semantics (no Windows run is claimed) ------------


def test_file_url_on_windows_becomes_a_drive_path() -> None:
    import nturl2path

    from iree_conformance.frontends.onnx.download import _local_path

    path = _local_path("file:///C:/mirror/mnist%2012.tar.gz", nturl2path.url2pathname)
    assert str(path) == r"C:\mirror\mnist 12.tar.gz"
    unc = _local_path("file://server/share/m.onnx", nturl2path.url2pathname)
    assert str(unc) == r"\\server\share\m.onnx"


def test_file_url_on_posix_keeps_its_path() -> None:
    from urllib.parse import unquote  # POSIX's url2pathname

    from iree_conformance.frontends.onnx.download import _local_path

    assert _local_path("file:///tmp/a%20b.onnx", unquote).as_posix() == "/tmp/a b.onnx"
    assert _local_path("file://localhost/tmp/x", unquote).as_posix() == "/tmp/x"
    assert _local_path("https://example.org/x") is None


def _age(path: Path, seconds: float) -> None:
    import os
    import time

    old = time.time() - seconds
    os.utime(path, (old, old))


def test_a_download_killed_mid_way_is_resumed_from_its_partial(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """kill -9 leaves ``.m.onnx.part-<id>``: the next fetch takes it over and asks for
    the rest with Range; the result is verified as always."""
    url = server.add("m.onnx", BODY)
    orphan = tmp_path / ".m.onnx.part-0123456789ab"
    orphan.write_bytes(BODY[:400_000])
    _age(orphan, 600)
    dest = downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert dest.read_bytes() == BODY
    assert server.requests == [("/m.onnx", "bytes=400000-", 206)]
    assert_cache_holds_only(tmp_path, {"m.onnx": SHA})


def test_a_partial_still_being_written_is_left_alone(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("m.onnx", BODY)
    live = tmp_path / ".m.onnx.part-live00000000"
    live.write_bytes(BODY[:1000])  # just written: another process's download
    downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert live.read_bytes() == BODY[:1000]
    assert server.requests == [("/m.onnx", None, 200)]


def test_a_corrupt_orphan_is_never_used(server: LoopbackServer, tmp_path: Path) -> None:
    """An orphan that is not a prefix of the file fails verification once resumed: the
    download starts over from byte 0, and only verified bytes get the name."""
    url = server.add("m.onnx", BODY)
    orphan = tmp_path / ".m.onnx.part-0123456789ab"
    orphan.write_bytes(b"\xff" * 400_000)
    _age(orphan, 600)
    dest = downloader().fetch(url, tmp_path / "m.onnx", sha256=SHA, size=len(BODY))
    assert dest.read_bytes() == BODY
    assert server.requests == [("/m.onnx", "bytes=400000-", 206), ("/m.onnx", None, 200)]
    assert_cache_holds_only(tmp_path, {"m.onnx": SHA})


def test_orphans_of_any_file_are_swept_after_an_hour(tmp_path: Path) -> None:
    from iree_conformance.frontends.onnx.download import sweep_partials

    (tmp_path / "files").mkdir()
    old = tmp_path / "files" / ".gone.onnx.part-0123456789ab"
    new = tmp_path / "files" / ".other.onnx.part-0123456789ab"
    keep = tmp_path / "files" / "model.onnx"
    for p in (old, new, keep):
        p.write_bytes(b"x")
    _age(old, 7200)
    _age(keep, 7200)
    assert sweep_partials(tmp_path) == [old]
    assert new.exists() and keep.exists() and not old.exists()
