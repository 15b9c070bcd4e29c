"""fetch_baseline.py against a local stand-in for the GitHub REST API (127.0.0.1 only)."""

from __future__ import annotations

import io
import json
import threading
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.ci_helpers import RESULTS, run_ci

TOKEN = "test-token-123"


def artifact_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("merged.json", (RESULTS / "linux-py3.11.json").read_text(encoding="utf-8"))
        zf.writestr("durations/durations-linux.json", '{"llvm-cpu:stablehlo/abs_negate_f16": 0.5}')
    return buf.getvalue()


class FakeGitHub(BaseHTTPRequestHandler):
    runs: list[dict] = []
    artifacts: dict[int, list[dict]] = {}
    blob = b""
    seen: list[tuple[str, str | None]] = []

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _json(self, data, status=200):
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server API
        url = urllib.parse.urlparse(self.path)
        query = urllib.parse.parse_qs(url.query)
        auth = self.headers.get("Authorization")
        type(self).seen.append((url.path, auth))
        if url.path.startswith("/blob/"):
            if auth:  # pre-signed storage rejects a second credential, as Azure does
                return self._json({"error": "auth header on a signed URL"}, 400)
            self.send_response(200)
            self.send_header("Content-Length", str(len(self.blob)))
            self.end_headers()
            self.wfile.write(self.blob)
            return
        if auth != f"Bearer {TOKEN}":
            return self._json({"message": "Bad credentials"}, 401)
        if url.path == "/repos/o/r/actions/workflows/ci.yml/runs":
            assert query["branch"] == ["main"] and query["status"] == ["completed"]
            runs = [r for r in self.runs if "event" not in query or r["event"] == query["event"][0]]
            return self._json({"total_count": len(runs), "workflow_runs": runs})
        if url.path.startswith("/repos/o/r/actions/runs/") and url.path.endswith("/artifacts"):
            run_id = int(url.path.split("/")[-2])
            arts = [a for a in self.artifacts.get(run_id, []) if a["name"] == query["name"][0]]
            return self._json({"total_count": len(arts), "artifacts": arts})
        if url.path.startswith("/repos/o/r/actions/artifacts/") and url.path.endswith("/zip"):
            self.send_response(302)
            self.send_header(
                "Location", f"http://127.0.0.1:{self.server.server_port}/blob/a.zip?sig=x"
            )
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        return self._json({"message": "Not Found"}, 404)


@pytest.fixture
def api():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}"

    def art(aid, name="merged-results", expired=False):
        return {
            "id": aid,
            "name": name,
            "expired": expired,
            "archive_download_url": f"{base}/repos/o/r/actions/artifacts/{aid}/zip",
        }

    FakeGitHub.runs = [
        {
            "id": 30,
            "event": "push",
            "html_url": "https://github.com/o/r/actions/runs/30",
        },  # this run
        {"id": 29, "event": "pull_request", "html_url": "u29"},
        {"id": 28, "event": "push", "html_url": "u28"},  # its artifact expired
        {"id": 27, "event": "push", "html_url": "https://github.com/o/r/actions/runs/27"},
    ]
    FakeGitHub.artifacts = {
        30: [art(300)],
        29: [art(290)],
        28: [art(280, expired=True)],
        27: [art(270), art(271, "other")],
    }
    FakeGitHub.blob = artifact_zip()
    FakeGitHub.seen = []
    yield base
    server.shutdown()
    server.server_close()


def test_fetches_the_newest_unexpired_artifact_of_another_push_run(api, tmp_path, gh):
    dest = tmp_path / "base line"
    env = gh.env(GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY="o/r", GITHUB_RUN_ID="30")
    result = run_ci(
        "fetch-baseline",
        "--api-url",
        api,
        "--workflow",
        "ci.yml",
        "--artifact",
        "merged-results",
        "--branch",
        "main",
        "--event",
        "push",
        "--dest",
        dest,
        env=env,
    )
    assert "baseline: run 27" in result.stdout
    assert json.loads((dest / "merged.json").read_text(encoding="utf-8"))["schema"] == 1
    assert (dest / "durations" / "durations-linux.json").is_file()
    out = gh.outputs()
    assert out["found"] == "true" and out["run-id"] == "27" and out["run-url"].endswith("/runs/27")
    blob_requests = [auth for path, auth in FakeGitHub.seen if path.startswith("/blob/")]
    assert blob_requests == [None]  # the token never went to the storage URL


def test_no_baseline_is_not_an_error(api, tmp_path, gh):
    FakeGitHub.artifacts = {}
    env = gh.env(GITHUB_TOKEN=TOKEN)
    args = [
        "--api-url",
        api,
        "--repo",
        "o/r",
        "--workflow",
        "ci.yml",
        "--artifact",
        "merged-results",
        "--dest",
        tmp_path / "b",
    ]
    result = run_ci("fetch-baseline", *args, env=env)
    assert "no artifact 'merged-results'" in result.stderr and gh.outputs()["found"] == "false"
    assert not (tmp_path / "b").exists()
    assert run_ci("fetch-baseline", *args, "--required", env=env, check=False).returncode == 8


def test_bad_token_is_reported(api, tmp_path, gh):
    result = run_ci(
        "fetch-baseline",
        "--api-url",
        api,
        "--repo",
        "o/r",
        "--workflow",
        "ci.yml",
        "--artifact",
        "merged-results",
        "--dest",
        tmp_path,
        env=gh.env(GITHUB_TOKEN="wrong"),
        check=False,
    )
    assert result.returncode == 8 and "HTTP 401" in result.stderr


def test_unsafe_archive_paths_are_refused(tmp_path):

    from ci import fetch_baseline as fetch

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../escape.json", "{}")
    with pytest.raises(fetch.CIError, match="unsafe path"):
        fetch.extract(buf.getvalue(), tmp_path / "dest")
    assert not (tmp_path / "escape.json").exists()


class EchoingServer(BaseHTTPRequestHandler):
    """Answers 401 with the Authorization header, base64-encoded, as its reason phrase and
    in its JSON message (which the client shows)."""

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 - http.server API
        import base64

        echoed = base64.b64encode((self.headers.get("Authorization") or "").encode()).decode()
        body = json.dumps({"message": f"bad {echoed}"}).encode()
        self.send_response(401, f"bad {echoed}")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_token_echoed_back_or_inside_the_api_url_is_not_shown(monkeypatch):
    import base64

    from ci import fetch_baseline as fetch
    from ci._common import CIError

    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = "ghp_" + "s3cr3tTokenValue" * 2
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.setenv("GITHUB_TOKEN", secret)
        with pytest.raises(CIError) as raised:
            fetch.get_json(fetch.github_client(base), "/repos/o/r")
        message = str(raised.value)
        assert "HTTP 401" in message and "***" in message  # the echo was there, redacted
        assert secret not in message
        assert base64.b64encode(f"Bearer {secret}".encode()).decode() not in message
        assert base64.b64encode(secret.encode()).decode()[4:20] not in message
        monkeypatch.delenv("GITHUB_TOKEN")
        with pytest.raises(CIError) as raised:
            fetch.get_json(fetch.github_client(f"{base}/api?access_token={secret}"), "/repos/o/r")
        assert secret not in str(raised.value)
        # An --api-url that nothing answers: the connection error names the URL, redacted.
        server.shutdown()
        server.server_close()
        with pytest.raises(CIError) as raised:
            api = fetch.github_client(f"http://user:{secret}@{base[7:]}/api?access_token={secret}")
            api.max_retries, api.sleep = 0, lambda s: None
            fetch.get_json(api, "/repos/o/r")
        assert "could not reach" in str(raised.value) and secret not in str(raised.value)
    finally:
        server.server_close()
