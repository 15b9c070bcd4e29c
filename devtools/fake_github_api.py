"""A loopback GitHub REST API for the Actions cache endpoints, as GitHub documents them.

Implements listing with per_page/page and Link headers, usage, storage and
retention limits, delete by id and by key(+ref), pull request state (and head commit),
a workflow's runs and a run's artifacts (what ci/fetch_baseline.py reads; empty unless
given), a pull request's issue comments (list with per_page/page, create, update: what
ci/pr_comment.py writes; bodies over GitHub's 65,536 characters are refused with 422),
issues (list with state, creator, per_page/page; create; update body, title and state;
their comments: what ci/fresh_install.py writes),
and scripted failures (401, 403 with rate-limit headers, 429 with retry-after, 500)
queued per (method, path).

Used by the cache_tools tests and by devtools/act_local.py, which serves it on 127.0.0.1 to
the workflows it runs under act (GITHUB_API_URL) with a fake token. It binds to
127.0.0.1 only. Run alone, it serves until interrupted. Example:

  python -m devtools.fake_github_api --port 8765 --repo octo/repo
  GITHUB_TOKEN=<the printed fake token> cache-tools audit --repo octo/repo --api-url http://127.0.0.1:8765
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import threading
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from devtools._loopback import LoopbackServer

TOKEN = "ghp_FAKEtokenValue0123456789abcdefSECRET"


def entry(
    id: int,
    key: str,
    ref: str,
    size: int,
    created: str,
    accessed: str | None = None,
    version: str = "v" * 8,
) -> dict[str, Any]:
    return {
        "id": id,
        "ref": ref,
        "key": key,
        "version": version,
        "last_accessed_at": accessed or created,
        "created_at": created,
        "size_in_bytes": size,
    }


class FakeGitHub(LoopbackServer):
    def __init__(
        self,
        entries: list[dict[str, Any]] | None = None,
        *,
        owner_repo: str = "octo/repo",
        storage_limit_gb: int | None = 10,
        retention_days: int | None = 7,
        pulls: dict[int, str] | None = None,
        token: str = TOKEN,
        workflow_runs: dict[str, list[dict[str, Any]]] | None = None,
        run_artifacts: dict[int, list[dict[str, Any]]] | None = None,
        artifact_files: dict[int, str] | None = None,
        pull_heads: dict[int, str] | None = None,
        comments: dict[int, list[dict[str, Any]]] | None = None,
        issues: list[dict[str, Any]] | None = None,
        port: int = 0,
    ) -> None:
        self.entries = list(entries or [])
        self.repo = owner_repo
        self.storage_limit_gb = storage_limit_gb  # None -> 404
        self.retention_days = retention_days  # None -> 403
        self.pulls = dict(pulls or {})
        self.pull_heads = dict(pull_heads or {})  # number -> head commit sha
        # issue (pull request) number -> its comments, oldest first
        self.comments: dict[int, list[dict[str, Any]]] = {
            int(k): list(v) for k, v in (comments or {}).items()
        }
        # issues (not pull requests), as GET /repos/R/issues/N answers them
        self.issues: list[dict[str, Any]] = [dict(i) for i in issues or []]
        self.token = token
        self.workflow_runs = dict(workflow_runs or {})  # workflow file name -> runs
        self.run_artifacts = dict(run_artifacts or {})  # run id -> artifacts
        # artifact id -> a zip file on disk: .../actions/artifacts/ID/zip redirects to a
        # pre-signed-style URL (no token accepted there, as blob storage behaves)
        self.artifact_files = dict(artifact_files or {})
        self.requests: list[dict[str, Any]] = []
        self.deleted_ids: list[int] = []
        self.scripted: dict[tuple[str, str], deque] = defaultdict(deque)
        self.usage_override: dict[str, Any] | None = None
        self.raw_override: dict[tuple[str, str], tuple[int, dict[str, str], bytes]] = {}
        self._lock = threading.Lock()
        super().__init__(self._handler(), port, poll_interval=0.02)

    def add_entry(self, cache_entry: dict[str, Any]) -> None:
        """Adds (or replaces, by key and ref) an entry while the server runs."""
        with self._lock:
            self.entries = [
                e
                for e in self.entries
                if (e["key"], e["ref"]) != (cache_entry["key"], cache_entry["ref"])
            ]
            self.entries.append(cache_entry)

    def next_id(self) -> int:
        with self._lock:
            return max((e["id"] for e in self.entries), default=0) + 1

    def script(
        self,
        method: str,
        path: str,
        status: int,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Answer the next ``method path`` with this instead of the real endpoint."""
        self.scripted[(method, path)].append((status, headers or {}, body))

    def calls(self, method: str | None = None, path_prefix: str = "") -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests
            if (method is None or r["method"] == method) and r["path"].startswith(path_prefix)
        ]

    # -- request handling -------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                fake._dispatch(self, "GET")

            def do_DELETE(self) -> None:
                fake._dispatch(self, "DELETE")

            def do_POST(self) -> None:
                fake._dispatch(self, "POST")

            def do_PATCH(self) -> None:
                fake._dispatch(self, "PATCH")

        return Handler

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        raw = (
            b""
            if body is None
            else (body if isinstance(body, bytes) else json.dumps(body).encode())
        )
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(raw)

    def _blob(self, h: BaseHTTPRequestHandler, path: str) -> None:
        if h.headers.get("Authorization"):
            return self._send(h, 400, {"message": "a signed URL takes no Authorization header"})
        try:
            raw = open(self.artifact_files[int(path.rsplit("/", 1)[1])], "rb").read()
        except (KeyError, ValueError, OSError):
            return self._send(h, 404, {"message": "Not Found"})
        h.send_response(200)
        h.send_header("Content-Type", "application/zip")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    def _dispatch(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        length = int(h.headers.get("Content-Length") or 0)
        raw_body = h.rfile.read(length) if length else b""
        with self._lock:
            self.requests.append(
                {
                    "method": method,
                    "path": path,
                    "query": query,
                    "authorization": h.headers.get("Authorization"),
                    "body": raw_body.decode("utf-8", "replace") if raw_body else None,
                }
            )
            scripted = (
                self.scripted[(method, path)].popleft() if self.scripted[(method, path)] else None
            )
        if method == "GET" and path.startswith("/_blob/"):
            return self._blob(h, path)
        if scripted is not None:
            status, headers, body = scripted
            return self._send(h, status, body, headers)
        if (method, path) in self.raw_override:
            status, headers, raw = self.raw_override[(method, path)]
            return self._send(h, status, raw, headers)
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(
                h,
                401,
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"},
            )
        base = f"/repos/{self.repo}"
        if not path.startswith(base + "/"):
            return self._send(h, 404, {"message": "Not Found"})
        rest = path[len(base) :]
        with self._lock:
            if method == "GET" and rest == "/actions/caches":
                return self._list(h, query, path)
            if method == "DELETE" and rest == "/actions/caches":
                return self._delete_by_key(h, query)
            if method == "DELETE" and rest.startswith("/actions/caches/"):
                return self._delete_id(h, rest.rsplit("/", 1)[1])
            if method == "GET" and rest == "/actions/cache/usage":
                body = self.usage_override or {
                    "full_name": self.repo,
                    "active_caches_size_in_bytes": sum(e["size_in_bytes"] for e in self.entries),
                    "active_caches_count": len(self.entries),
                }
                return self._send(h, 200, body)
            if method == "GET" and rest == "/actions/cache/storage-limit":
                if self.storage_limit_gb is None:
                    return self._send(h, 404, {"message": "Not Found"})
                return self._send(h, 200, {"max_cache_size_gb": self.storage_limit_gb})
            if method == "GET" and rest == "/actions/cache/usage-policy":
                return self._send(h, 404, {"message": "Not Found"})
            if method == "GET" and rest == "/actions/cache/retention-limit":
                if self.retention_days is None:
                    return self._send(h, 403, {"message": "Resource not accessible by integration"})
                return self._send(h, 200, {"max_cache_retention_days": self.retention_days})
            if (
                method == "GET"
                and rest.startswith("/actions/workflows/")
                and rest.endswith("/runs")
            ):
                workflow = rest[len("/actions/workflows/") : -len("/runs")]
                runs = [
                    r
                    for r in self.workflow_runs.get(workflow, [])
                    if all(
                        q not in query or str(r.get(f)) == query[q]
                        for q, f in (("event", "event"), ("branch", "head_branch"))
                    )
                ]
                return self._send(h, 200, {"total_count": len(runs), "workflow_runs": runs})
            if (
                method == "GET"
                and rest.startswith("/actions/runs/")
                and rest.endswith("/artifacts")
            ):
                run_id = int(rest.split("/")[3])
                arts = [
                    dict(
                        a, archive_download_url=f"{self.url}{base}/actions/artifacts/{a['id']}/zip"
                    )
                    for a in self.run_artifacts.get(run_id, [])
                    if "name" not in query or a.get("name") == query["name"]
                ]
                return self._send(h, 200, {"total_count": len(arts), "artifacts": arts})
            if method == "GET" and rest.startswith("/actions/artifacts/") and rest.endswith("/zip"):
                artifact_id = rest.split("/")[3]
                if not artifact_id.isdigit() or int(artifact_id) not in self.artifact_files:
                    return self._send(h, 404, {"message": "Not Found"})
                return self._send(
                    h, 302, None, {"Location": f"{self.url}/_blob/{artifact_id}?sig=fake"}
                )
            if method == "GET" and rest.startswith("/pulls/"):
                number = int(rest.rsplit("/", 1)[1])
                if number not in self.pulls:
                    return self._send(h, 404, {"message": "Not Found"})
                body = {"number": number, "state": self.pulls[number]}
                if number in self.pull_heads:
                    body["head"] = {"sha": self.pull_heads[number]}
                return self._send(h, 200, body)
            if rest == "/issues" or (
                rest.startswith("/issues/")
                and rest.strip("/").split("/")[1].isdigit()
                and len(rest.strip("/").split("/")) == 2
            ):
                return self._issues(h, method, rest, query, raw_body)
            if rest.startswith("/issues/"):
                return self._issue_comments(h, method, rest, query, raw_body)
        return self._send(h, 404, {"message": "Not Found"})

    def _issues(
        self,
        h: BaseHTTPRequestHandler,
        method: str,
        rest: str,
        query: dict[str, str],
        raw_body: bytes,
    ) -> None:
        """GET/POST /issues and GET/PATCH /issues/N, as GitHub documents them (a created
        issue takes the next number after every pull request and issue)."""
        payload: dict[str, Any] = {}
        if method in ("POST", "PATCH"):
            try:
                payload = json.loads(raw_body.decode("utf-8"))
                if not isinstance(payload, dict):
                    raise TypeError
            except (ValueError, TypeError):
                return self._send(h, 400, {"message": "Problems parsing JSON"})
            if len(str(payload.get("body") or "")) > 65536:
                return self._send(h, 422, {"message": "Validation Failed: body is too long"})
        now = datetime.datetime.now(datetime.timezone.utc).isoformat()
        if rest == "/issues":
            if method == "GET":
                state = query.get("state", "open")
                items = [
                    i
                    for i in self.issues
                    if (state == "all" or i["state"] == state)
                    and ("creator" not in query or i["user"]["login"] == query["creator"])
                ]
                per_page = min(int(query.get("per_page", 30)), 100)
                page = int(query.get("page", 1))
                return self._send(h, 200, items[(page - 1) * per_page : page * per_page])
            if method == "POST":
                if not isinstance(payload.get("title"), str) or not payload["title"]:
                    return self._send(h, 422, {"message": "Validation Failed: title is missing"})
                number = max([*self.pulls, *(i["number"] for i in self.issues), 0]) + 1
                made = {
                    "number": number,
                    "title": payload["title"],
                    "body": payload.get("body") or "",
                    "state": "open",
                    "created_at": now,
                    "updated_at": now,
                    "user": {"login": "github-actions[bot]", "type": "Bot"},
                    "html_url": f"{self.url}/{self.repo}/issues/{number}",
                }
                self.issues.append(made)
                return self._send(h, 201, made)
            return self._send(h, 404, {"message": "Not Found"})
        number = int(rest.strip("/").split("/")[1])
        issue: dict[str, Any] | None = next((i for i in self.issues if i["number"] == number), None)
        if issue is None:
            return self._send(h, 404, {"message": "Not Found"})
        if method == "GET":
            return self._send(h, 200, issue)
        if method == "PATCH":
            if payload.get("state", "open") not in ("open", "closed"):
                return self._send(h, 422, {"message": "Validation Failed: state"})
            for field in ("title", "body", "state"):
                if field in payload:
                    issue[field] = payload[field]
            issue["updated_at"] = now
            return self._send(h, 200, issue)
        return self._send(h, 404, {"message": "Not Found"})

    def _issue_comments(
        self,
        h: BaseHTTPRequestHandler,
        method: str,
        rest: str,
        query: dict[str, str],
        raw_body: bytes,
    ) -> None:
        """GET/POST /issues/N/comments and PATCH /issues/comments/ID, as GitHub documents them."""
        parts = rest.strip("/").split("/")  # issues N comments | issues comments ID
        if method in ("POST", "PATCH"):
            try:
                payload = json.loads(raw_body.decode("utf-8"))
                body = payload["body"]
                if not isinstance(body, str):
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                return self._send(h, 400, {"message": "Problems parsing JSON"})
            if len(body) > 65536:
                return self._send(
                    h,
                    422,
                    {
                        "message": "Validation Failed: body is too long (maximum is 65536 characters)"
                    },
                )
        if (
            len(parts) == 3
            and parts[0] == "issues"
            and parts[2] == "comments"
            and parts[1].isdigit()
        ):
            number = int(parts[1])
            if number not in self.pulls and all(i["number"] != number for i in self.issues):
                return self._send(h, 404, {"message": "Not Found"})
            comments = self.comments.setdefault(number, [])
            if method == "GET":
                per_page = min(int(query.get("per_page", 30)), 100)
                page = int(query.get("page", 1))
                return self._send(h, 200, comments[(page - 1) * per_page : page * per_page])
            if method == "POST":
                ids = [c["id"] for cs in self.comments.values() for c in cs]
                comment_id = max(ids, default=1000) + 1
                now = datetime.datetime.now(datetime.timezone.utc).isoformat()
                comment = {
                    "id": comment_id,
                    "created_at": now,
                    "updated_at": now,
                    "body": body,
                    "user": {"login": "github-actions[bot]", "type": "Bot"},
                    "html_url": f"{self.url}/{self.repo}/pull/{number}#issuecomment-{comment_id}",
                }
                comments.append(comment)
                return self._send(h, 201, comment)
        if len(parts) == 3 and parts[:2] == ["issues", "comments"] and parts[2].isdigit():
            for comment in (c for cs in self.comments.values() for c in cs):
                if comment["id"] == int(parts[2]):
                    if method == "PATCH":
                        comment["body"] = body
                        comment["updated_at"] = datetime.datetime.now(
                            datetime.timezone.utc
                        ).isoformat()
                        return self._send(h, 200, comment)
                    if method == "GET":
                        return self._send(h, 200, comment)
            return self._send(h, 404, {"message": "Not Found"})
        return self._send(h, 404, {"message": "Not Found"})

    def _list(self, h: BaseHTTPRequestHandler, query: dict[str, str], path: str) -> None:
        items = [
            e
            for e in self.entries
            if ("key" not in query or e["key"].startswith(query["key"]))
            and ("ref" not in query or e["ref"] == query["ref"])
        ]
        items.sort(key=lambda e: e["last_accessed_at"], reverse=True)  # GitHub's default sort
        per_page = min(int(query.get("per_page", 30)), 100)
        page = int(query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(p: int) -> str:
            return f"<{self.url}{path}?per_page={per_page}&page={p}>"

        rels = []
        if page < last:
            rels += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            rels += [f'{link(page - 1)}; rel="prev"', f'{link(1)}; rel="first"']
        headers = {"Link": ", ".join(rels)} if rels else {}
        self._send(h, 200, {"total_count": len(items), "actions_caches": chunk}, headers)

    def _delete_id(self, h: BaseHTTPRequestHandler, raw_id: str) -> None:
        cache_id = int(raw_id)
        before = len(self.entries)
        self.entries = [e for e in self.entries if e["id"] != cache_id]
        if len(self.entries) == before:
            return self._send(h, 404, {"message": "Not Found"})
        self.deleted_ids.append(cache_id)
        return self._send(h, 204)

    def _delete_by_key(self, h: BaseHTTPRequestHandler, query: dict[str, str]) -> None:
        if "key" not in query:
            return self._send(h, 422, {"message": "key is required"})
        gone = [
            e
            for e in self.entries
            if e["key"] == query["key"] and query.get("ref", e["ref"]) == e["ref"]
        ]
        if not gone:
            return self._send(h, 404, {"message": "Not Found"})
        ids = {e["id"] for e in gone}
        self.entries = [e for e in self.entries if e["id"] not in ids]
        self.deleted_ids.extend(sorted(ids))
        return self._send(h, 200, {"total_count": len(gone), "actions_caches": gone})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fake_github_api.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)"
    )
    parser.add_argument("--repo", default="octo/repo", help="OWNER/NAME it answers for")
    args = parser.parse_args(argv)
    api = FakeGitHub(owner_repo=args.repo, port=args.port)
    print(
        f"fake GitHub API for {args.repo} at {api.url} (credentials: see TOKEN in devtools/fake_github_api.py); Ctrl-C stops it",
        flush=True,
    )
    try:
        api.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        api.server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
