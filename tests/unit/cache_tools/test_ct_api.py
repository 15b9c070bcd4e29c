from __future__ import annotations

import logging

import pytest

from cache_tools.credentials import Token, token_from_env
from cache_tools.errors import ApiError
from cache_tools.github_api import GitHubClient, parse_link_header
from tests.support.ct_fake_github import TOKEN, FakeGitHub, entry

REPO = "octo/repo"


def client_for(server: FakeGitHub, sleeps: list[float] | None = None, **kw) -> GitHubClient:
    sink = sleeps if sleeps is not None else []
    return GitHubClient(
        Token(TOKEN, "GITHUB_TOKEN"), server.url, sleep=sink.append, clock=lambda: 1000.0, **kw
    )


def many(n: int) -> list[dict]:
    return [
        entry(i, f"k-{i}", "refs/heads/main", 10 * i, f"2025-01-01T00:{i % 60:02d}:00Z")
        for i in range(1, n + 1)
    ]


def test_lists_every_page_via_link_headers(fake_github: FakeGitHub) -> None:
    fake_github.entries = many(250)
    got = client_for(fake_github).list_caches(REPO)
    assert sorted(e["id"] for e in got) == list(range(1, 251))
    pages = fake_github.calls("GET", f"/repos/{REPO}/actions/caches")
    assert len(pages) == 3
    assert all(p["query"]["per_page"] == "100" for p in pages)
    assert [p["query"].get("page", "1") for p in pages] == ["1", "2", "3"]


def test_usage_and_limits(fake_github: FakeGitHub) -> None:
    fake_github.entries = many(5)
    c = client_for(fake_github)
    assert c.cache_usage(REPO)["active_caches_size_in_bytes"] == 150
    assert c.storage_limit_gb(REPO) == 10
    assert c.retention_days(REPO) == 7
    fake_github.storage_limit_gb = None  # 404 on storage-limit and usage-policy
    fake_github.retention_days = None  # 403
    assert c.storage_limit_gb(REPO) is None
    assert c.retention_days(REPO) is None
    assert any("HTTP 403" in e for e in c.events)


def test_401_is_a_clear_error_without_the_token(fake_github: FakeGitHub) -> None:
    c = GitHubClient(
        Token("ghp_wrongTOKENvalue42", "GH_TOKEN"), fake_github.url, sleep=lambda s: None
    )
    with pytest.raises(ApiError) as info:
        c.list_caches(REPO)
    assert info.value.status == 401
    assert "HTTP 401 (Bad credentials)" in str(info.value) and "GITHUB_TOKEN/GH_TOKEN" in str(
        info.value
    )
    assert "ghp_wrongTOKENvalue42" not in str(info.value)


def test_403_rate_limit_waits_until_reset_then_succeeds(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/actions/cache/usage"
    fake_github.script(
        "GET",
        path,
        403,
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1010"},
        {"message": "API rate limit exceeded"},
    )
    sleeps: list[float] = []
    c = client_for(fake_github, sleeps)
    assert c.cache_usage(REPO)["full_name"] == REPO
    assert sleeps == [11.0]  # reset 1010 - clock 1000 + 1 s margin
    assert "rate limited (HTTP 403)" in c.events[0]


def test_429_honours_retry_after(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/actions/caches"
    fake_github.script("GET", path, 429, {"retry-after": "3"}, {"message": "secondary rate limit"})
    sleeps: list[float] = []
    client_for(fake_github, sleeps).list_caches(REPO)
    assert sleeps == [3.0]


def test_rate_limit_longer_than_max_wait_gives_up_saying_why(fake_github: FakeGitHub) -> None:
    fake_github.script("GET", f"/repos/{REPO}/actions/caches", 429, {"retry-after": "3600"})
    sleeps: list[float] = []
    with pytest.raises(
        ApiError, match=r"rate limited \(HTTP 429\); GitHub asks to wait 3600s"
    ) as info:
        client_for(fake_github, sleeps, max_wait=60).list_caches(REPO)
    assert sleeps == [] and info.value.exit_code == 7


def test_500_then_success_backs_off(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/actions/caches"
    fake_github.script("GET", path, 500, body={"message": "boom"})
    fake_github.script("GET", path, 502, body=b"<html>bad gateway</html>")
    fake_github.entries = many(2)
    sleeps: list[float] = []
    assert len(client_for(fake_github, sleeps).list_caches(REPO)) == 2
    assert sleeps == [1.0, 2.0]


def test_persistent_500_gives_up_after_bounded_retries(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/actions/cache/usage"
    for _ in range(10):
        fake_github.script("GET", path, 503)
    sleeps: list[float] = []
    with pytest.raises(ApiError, match=r"HTTP 503 persisted over 3 attempts"):
        client_for(fake_github, sleeps, max_retries=2).cache_usage(REPO)
    assert sleeps == [1.0, 2.0]


def test_403_without_rate_limit_headers_is_a_permission_error(fake_github: FakeGitHub) -> None:
    fake_github.script(
        "GET",
        f"/repos/{REPO}/actions/caches",
        403,
        {"x-ratelimit-remaining": "4999"},
        {"message": "Resource not accessible by integration"},
    )
    with pytest.raises(ApiError, match="lacks permission"):
        client_for(fake_github).list_caches(REPO)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json at all", "expected JSON"),
        ({"total_count": 1}, "expected an object with a list 'actions_caches'"),
        ([1, 2, 3], "expected an object"),
    ],
)
def test_malformed_list_answers(fake_github: FakeGitHub, body, message) -> None:
    fake_github.script("GET", f"/repos/{REPO}/actions/caches", 200, body=body)
    with pytest.raises(ApiError, match=message):
        client_for(fake_github).list_caches(REPO)


def test_malformed_usage_answer(fake_github: FakeGitHub) -> None:
    fake_github.script("GET", f"/repos/{REPO}/actions/cache/usage", 200, body={"full_name": REPO})
    with pytest.raises(ApiError, match="active_caches_size_in_bytes"):
        client_for(fake_github).cache_usage(REPO)


def test_delete_by_id_and_by_key_and_ref(fake_github: FakeGitHub) -> None:
    fake_github.entries = [
        entry(1, "a", "refs/heads/main", 1, "2025-01-01T00:00:00Z"),
        entry(2, "b", "refs/heads/main", 1, "2025-01-01T00:00:00Z"),
        entry(3, "b", "refs/pull/7/merge", 1, "2025-01-01T00:00:00Z"),
    ]
    c = client_for(fake_github)
    assert c.delete_cache(REPO, 1) is True
    assert c.delete_cache(REPO, 1) is False  # already gone: 404 is not an error
    gone = c.delete_by_key(REPO, "b", ref="refs/pull/7/merge")
    assert [e["id"] for e in gone] == [3]
    assert [e["id"] for e in fake_github.entries] == [2]
    assert fake_github.deleted_ids == [1, 3]


def test_pull_request_state(fake_github: FakeGitHub) -> None:
    fake_github.pulls = {5: "closed", 6: "open"}
    c = client_for(fake_github)
    assert (c.pull_state(REPO, 5), c.pull_state(REPO, 6), c.pull_state(REPO, 99)) == (
        "closed",
        "open",
        None,
    )


def test_token_is_not_sent_to_another_host(fake_github: FakeGitHub) -> None:
    other = FakeGitHub().start()
    try:
        fake_github.entries = many(1)
        fake_github.script(
            "GET",
            f"/repos/{REPO}/actions/caches",
            200,
            {"Link": f'<{other.url}/x?page=2>; rel="next"'},
            {"total_count": 2, "actions_caches": fake_github.entries},
        )
        with pytest.raises(ApiError, match="another host"):
            client_for(fake_github).list_caches(REPO)
        assert other.requests == []
    finally:
        other.stop()


def test_bad_repo_and_api_url() -> None:
    with pytest.raises(ApiError, match="OWNER/NAME"):
        GitHubClient(None, "http://127.0.0.1:1").list_caches("just-a-name")
    with pytest.raises(ApiError, match="not an http"):
        GitHubClient(None, "ftp://example")


def test_unreachable_api_reports_attempts() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens here now
    sleeps: list[float] = []
    c = GitHubClient(
        Token(TOKEN, "GITHUB_TOKEN"),
        f"http://127.0.0.1:{port}",
        sleep=sleeps.append,
        max_retries=1,
        timeout=2,
    )
    with pytest.raises(ApiError, match="could not reach the API after 2 attempts") as info:
        c.cache_usage(REPO)
    assert TOKEN not in str(info.value) and sleeps == [1.0]


def test_token_from_env_and_its_disguise(caplog: pytest.LogCaptureFixture) -> None:
    tok = token_from_env({"GH_TOKEN": TOKEN})
    assert tok is not None and tok.source == "GH_TOKEN"
    assert TOKEN not in repr(tok) and TOKEN not in str(tok) and TOKEN not in f"{tok}"
    assert token_from_env({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}).reveal() == "a"
    with pytest.raises(ApiError, match="no GitHub token"):
        token_from_env({})
    logging.getLogger("cache_tools.api").warning("%s", tok)
    assert TOKEN not in caplog.text


def test_link_header_parsing() -> None:
    links = parse_link_header('<https://a/x?page=2>; rel="next", <https://a/x?page=5>; rel="last"')
    assert links == {"next": "https://a/x?page=2", "last": "https://a/x?page=5"}
    assert parse_link_header(None) == {}


def test_non_json_answer_echoing_the_token_is_redacted(fake_github: FakeGitHub) -> None:
    fake_github.script(
        "GET", f"/repos/{REPO}/actions/cache/usage", 200, body=f"oops {TOKEN} oops".encode()
    )
    with pytest.raises(ApiError, match="expected JSON") as info:
        client_for(fake_github).cache_usage(REPO)
    assert TOKEN not in str(info.value) and TOKEN[:12] not in str(info.value)


def test_secondary_rate_limit_403_without_headers_waits_a_minute(fake_github: FakeGitHub) -> None:
    # Issue #12.9: GitHub's secondary rate limit can be a bare 403 saying "rate limit";
    # it is retried after 60 s, not reported as a missing permission.
    path = f"/repos/{REPO}/actions/caches"
    fake_github.script(
        "GET",
        path,
        403,
        {},
        {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."},
    )
    fake_github.entries = many(1)
    sleeps: list[float] = []
    c = client_for(fake_github, sleeps)
    assert len(c.list_caches(REPO)) == 1
    assert sleeps == [60.0]
    assert "rate limited (HTTP 403)" in c.events[0]
    assert len(fake_github.calls("GET", path)) == 2


def test_persistent_secondary_rate_limit_gives_up_as_a_rate_limit(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/actions/caches"
    for _ in range(5):
        fake_github.script("GET", path, 403, {}, {"message": "secondary rate limit"})
    sleeps: list[float] = []
    with pytest.raises(ApiError, match="rate limited") as info:
        client_for(fake_github, sleeps, max_retries=2).list_caches(REPO)
    assert "lacks permission" not in str(info.value)
    assert sleeps == [60.0, 60.0]


@pytest.mark.parametrize("prefix", [b"", b"Bearer ", b"x-access-token:", b"B"])
def test_a_token_echoed_base64_encoded_is_redacted(fake_github: FakeGitHub, prefix: bytes) -> None:
    """A server (or a proxy) that echoes the Authorization header back encoded must not
    get the token printed: every byte alignment of its base64 form is scrubbed."""
    import base64

    echoed = base64.b64encode(prefix + TOKEN.encode()).decode()
    fake_github.script(
        "GET", f"/repos/{REPO}/actions/cache/usage", 200, body=f"oops {echoed} oops".encode()
    )
    with pytest.raises(ApiError, match="expected JSON") as info:
        client_for(fake_github).cache_usage(REPO)
    core = base64.b64encode(TOKEN.encode()).decode()[4:16]
    assert echoed not in str(info.value)
    if not prefix:
        assert core not in str(info.value)


def test_a_token_inside_the_api_url_is_never_shown() -> None:
    from cache_tools.credentials import redact

    with pytest.raises(ApiError) as info:
        GitHubClient(None, "ftp://user:ghp_secretvalue123@example.com/api")
    assert "ghp_secretvalue123" not in str(info.value) and "***@example.com" in str(info.value)
    text = redact("GET https://x:ghp_s3cret@h/api?access_token=ghp_other&page=2 failed", None)
    assert "ghp_s3cret" not in text and "ghp_other" not in text
    assert redact("GET https://h/api/caches?page=2: HTTP 500", None).endswith("?page=2: HTTP 500")


# -- downloads and JSON writes (ci/fetch_baseline.py, ci/pr_comment.py) ---------------------


def zip_file(tmp_path, size: int = 1000):
    path = tmp_path / "a.zip"
    path.write_bytes(b"PK" + b"x" * (size - 2))
    return path


def test_download_follows_the_redirect_without_the_token(fake_github: FakeGitHub, tmp_path):
    fake_github.artifact_files[7] = str(zip_file(tmp_path))
    data = client_for(fake_github).download(f"/repos/{REPO}/actions/artifacts/7/zip", limit=10_000)
    assert data == zip_file(tmp_path).read_bytes()
    api, blob = fake_github.requests
    assert api["authorization"] == f"Bearer {TOKEN}"
    # The storage URL is on the same host here: the token is dropped anyway (the fake's
    # storage answers 400 to an Authorization header, as Azure's does).
    assert blob["path"] == "/_blob/7" and blob["authorization"] is None


def test_download_redirected_to_another_host(fake_github: FakeGitHub, tmp_path) -> None:
    storage = FakeGitHub().start()
    try:
        storage.artifact_files[3] = str(zip_file(tmp_path, 50))
        path = f"/repos/{REPO}/actions/artifacts/3/zip"
        fake_github.script("GET", path, 302, {"Location": f"{storage.url}/_blob/3?sig=s3cr3t"})
        assert len(client_for(fake_github).download(path, limit=50)) == 50
        assert [r["authorization"] for r in storage.requests] == [None]
        # A refused storage URL: one line, the hint, and neither the URL's signature nor token.
        fake_github.script("GET", path, 302, {"Location": f"{storage.url}/_blob/4?sig=s3cr3t"})
        with pytest.raises(ApiError) as info:
            client_for(fake_github).download(path, limit=50)
        message = str(info.value)
        assert "HTTP 404" in message and "signed download URL was refused" in message
        assert "s3cr3t" not in message and TOKEN not in message and "\n" not in message
    finally:
        storage.stop()


def test_download_over_the_limit_is_refused(fake_github: FakeGitHub, tmp_path) -> None:
    fake_github.artifact_files[7] = str(zip_file(tmp_path, 1001))
    with pytest.raises(ApiError, match="1001 bytes, over the limit of 1000 bytes"):
        client_for(fake_github).download(f"/repos/{REPO}/actions/artifacts/7/zip", limit=1000)


def test_download_without_a_declared_length_stops_at_the_limit() -> None:
    """A body with no Content-Length (read until the connection closes) is cut off at the
    limit, not read whole into memory."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    sent: list[int] = []
    done = threading.Event()

    class Endless(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(1000):  # 62.5 MiB, unless the client hangs up
                    self.wfile.write(b"x" * 65536)
                    sent.append(65536)
            except OSError:
                pass
            done.set()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        c = GitHubClient(None, f"http://127.0.0.1:{server.server_port}", sleep=lambda s: None)
        with pytest.raises(ApiError, match="more than 100000 bytes, over the limit"):
            c.download("/blob", limit=100_000)
    finally:
        server.shutdown()
        server.server_close()
    assert done.wait(10)  # the client hung up, so the server stopped writing
    assert sum(sent) < 1000 * 65536 // 2


def test_a_redirect_without_location_is_an_error(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/actions/artifacts/9/zip"
    fake_github.script("GET", path, 302, {})
    with pytest.raises(ApiError, match="HTTP 302 without a usable Location"):
        client_for(fake_github).download(path, limit=10)


def test_json_writes_send_the_body_and_a_post_is_not_repeated(fake_github: FakeGitHub) -> None:
    fake_github.pulls[1] = "open"
    c = client_for(fake_github)
    made = c.request("POST", f"/repos/{REPO}/issues/1/comments", body={"body": "hi"}, ok=(201,))
    assert made.data["body"] == "hi"
    edited = c.request(
        "PATCH", f"/repos/{REPO}/issues/comments/{made.data['id']}", body={"body": "2"}
    )
    assert edited.data["body"] == "2" and fake_github.comments[1][0]["body"] == "2"
    # A POST that failed on the server may have been done: it is not sent twice.
    path = f"/repos/{REPO}/issues/1/comments"
    fake_github.script("POST", path, 502)
    sleeps: list[float] = []
    with pytest.raises(ApiError, match="HTTP 502 persisted over 1 attempts"):
        client_for(fake_github, sleeps).request("POST", path, body={"body": "x"}, ok=(201,))
    assert len(fake_github.calls("POST", path)) == 2 and sleeps == []
    # A PATCH (the same edit again) is retried.
    fake_github.script("PATCH", f"/repos/{REPO}/issues/comments/{made.data['id']}", 502)
    c2 = client_for(fake_github, sleeps)
    c2.request("PATCH", f"/repos/{REPO}/issues/comments/{made.data['id']}", body={"body": "3"})
    assert sleeps == [1.0] and fake_github.comments[1][0]["body"] == "3"


def test_credentials_in_an_unreachable_api_url_are_not_shown() -> None:
    # requests' connection error shows the URL's path and query without the scheme, where
    # the URL redaction cannot tell it is a URL: the client scrubs the values themselves.
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    c = GitHubClient(
        None,
        f"http://me:ghp_userinfoSecret1@127.0.0.1:{port}/api?access_token=ghp_querySecret22",
        sleep=lambda s: None,
        max_retries=1,
        timeout=2,
    )
    with pytest.raises(ApiError, match="could not reach the API") as info:
        c.cache_usage(REPO)
    for shown in (str(info.value), *c.events):
        assert "ghp_userinfoSecret1" not in shown and "ghp_querySecret22" not in shown, shown


def test_a_multi_line_server_message_stays_one_line(fake_github: FakeGitHub) -> None:
    path = f"/repos/{REPO}/issues/1/comments"
    fake_github.script("POST", path, 422, body={"message": "Validation Failed\n\n## injected"})
    with pytest.raises(ApiError) as info:
        client_for(fake_github).request("POST", path, body={"body": "x"}, ok=(201,))
    assert "\n" not in str(info.value) and "Validation Failed ## injected" in str(info.value)
