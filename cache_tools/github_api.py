"""The project's one GitHub REST client: the Actions cache endpoints, JSON reads and writes
(ci/fetch_baseline.py, ci/pr_comment.py) and bounded artifact downloads.

Retries are bounded: rate limits (403/429 with ``retry-after`` or an exhausted
``x-ratelimit-remaining``; a 429, or a 403 whose message says "rate limit", without
those headers: 60 s) wait as told when that fits in ``max_wait``; 5xx and
connection errors back off exponentially up to ``max_retries``. The clock and
sleep are injectable so tests run instantly. A POST is not repeated after a server
error or a broken connection (it may have been done). The token is only ever placed in
the Authorization header, only for URLs on the configured API host, and never on the
redirect of a download (a pre-signed storage URL carries its own credential).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from .credentials import Token, redact, redact_url, url_secrets
from .errors import ApiError

log = logging.getLogger("cache_tools.api")

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
PER_PAGE = 100
MAX_PAGES = 1000
_LINK_RE = re.compile(r'<([^>]+)>\s*;\s*rel="([^"]+)"')
_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SECONDARY_RE = re.compile(r"rate limit", re.IGNORECASE)
SECONDARY_WAIT = 60.0  # seconds: a secondary rate limit without headers
REDIRECTS = (301, 302, 303, 307, 308)
CHUNK = 1 << 16


def parse_link_header(value: str | None) -> dict[str, str]:
    """``<url>; rel="next", <url>; rel="last"`` -> {"next": url, "last": url}."""
    links: dict[str, str] = {}
    for url, rels in _LINK_RE.findall(value or ""):
        for rel in rels.split():
            links[rel] = url
    return links


def check_repo(repo: str) -> str:
    if not _REPO_RE.match(repo or ""):
        raise ApiError(
            f"repository {repo!r} is not OWNER/NAME; pass --repo owner/name (or set GITHUB_REPOSITORY)"
        )
    return repo


@dataclass
class Response:
    status: int
    data: Any
    headers: dict[str, str]


class GitHubClient:
    def __init__(
        self,
        token: Token | None,
        api_url: str = DEFAULT_API_URL,
        *,
        max_retries: int = 4,
        max_wait: float = 60.0,
        backoff: float = 1.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        session: requests.Session | None = None,
        user_agent: str = "cache-tools",
    ) -> None:
        self.api_url = api_url.rstrip("/")
        parsed = urlsplit(self.api_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ApiError(
                f"--api-url {redact_url(api_url)!r} is not an http(s) URL, e.g. https://github.example.com/api/v3"
            )
        self._origin = (parsed.scheme, parsed.netloc)
        self._url_secrets = url_secrets(self.api_url)
        self.token = token
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.backoff = backoff
        self.timeout = timeout
        self.sleep = sleep
        self.clock = clock
        self.session = session or requests.Session()
        self.session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": user_agent,
            }
        )
        self.events: list[str] = []  # what happened (retries, waits), for reports

    # -- plumbing ---------------------------------------------------------

    def _url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return self.api_url + path_or_url

    def _headers_for(self, url: str) -> dict[str, str]:
        parsed = urlsplit(url)
        if self.token is not None and (parsed.scheme, parsed.netloc) == self._origin:
            return {"Authorization": f"Bearer {self.token.reveal()}"}
        return {}

    def _redact(self, text: str) -> str:
        """Text without the token or the credentials of the API URL, in any form."""
        text = redact(text, self.token)
        for secret in self._url_secrets:
            text = redact(text, secret)
        return text

    def _note(self, message: str) -> None:
        message = self._redact(message)
        self.events.append(message)
        log.warning("%s", message)

    def _rate_limit_wait(self, resp: requests.Response) -> float | None:
        """Seconds GitHub asks us to wait, or None if this is not a rate limit."""
        retry_after = resp.headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return 60.0
        if resp.headers.get("x-ratelimit-remaining") == "0":
            reset = resp.headers.get("x-ratelimit-reset")
            try:
                return max(0.0, float(reset) - self.clock()) + 1.0 if reset else 60.0
            except ValueError:
                return 60.0
        if resp.status_code == 429:
            return 60.0  # secondary limit without headers: GitHub says wait at least a minute
        if resp.status_code == 403 and _SECONDARY_RE.search(self._message(resp)):
            # A secondary rate limit can come as a bare 403 whose message says "rate limit"
            # (no retry-after, no exhausted x-ratelimit-remaining); it is not a missing
            # permission. GitHub's guidance: wait at least one minute before retrying.
            return SECONDARY_WAIT
        return None

    @staticmethod
    def _message(resp: requests.Response) -> str:
        try:
            data = resp.json()
        except ValueError:
            return resp.text or ""
        return str(data.get("message", "")) if isinstance(data, dict) else ""

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        ok: tuple[int, ...] = (200,),
    ) -> Response:
        """One logical request (``body``: sent as JSON) with bounded retries; its JSON answer.
        Raises ApiError on failure."""
        url = self._url(path_or_url)
        what = f"{method} {urlsplit(url).path}"
        resp = self._send(method, url, what, ok=ok, params=params, body=body)
        return Response(
            resp.status_code, self._json(resp, what) if resp.content else None, dict(resp.headers)
        )

    def download(self, url: str, *, limit: int) -> bytes:
        """The body of GET ``url``, at most ``limit`` bytes (more is an ApiError, found before
        more than ``limit`` bytes are read). A redirect (an artifact's download answers with
        a pre-signed storage URL) is followed without the Authorization header, whichever
        host it points to: that URL carries its own credential, and storage refuses a second."""
        url = self._url(url)
        what = f"GET {urlsplit(url).path}"
        resp = self._send("GET", url, what, ok=(200, *REDIRECTS), stream=True, redirects=False)
        if resp.status_code in REDIRECTS:
            resp.close()
            target = urljoin(url, resp.headers.get("Location") or "")
            if urlsplit(target).scheme not in ("http", "https") or target == url:
                raise ApiError(
                    f"{what}: HTTP {resp.status_code} without a usable Location to follow",
                    resp.status_code,
                )
            what = f"GET (the download {urlsplit(url).path} redirected to)"
            resp = self._send(
                "GET",
                target,
                what,
                ok=(200,),
                stream=True,
                authorize=False,
                refused="the signed download URL was refused; try again (it expires quickly)",
            )
        return self._read_bounded(resp, what, limit)

    def _read_bounded(self, resp: requests.Response, what: str, limit: int) -> bytes:
        with resp:
            declared = resp.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise ApiError(f"{what}: {declared} bytes, over the limit of {limit} bytes")
            data = bytearray()
            try:
                for chunk in resp.iter_content(CHUNK):
                    data += chunk
                    if len(data) > limit:
                        raise ApiError(f"{what}: more than {limit} bytes, over the limit")
            except requests.RequestException as exc:
                reason = self._redact(type(exc).__name__ + ": " + str(exc))
                raise ApiError(f"{what}: the download broke off ({reason}); try again") from None
        return bytes(data)

    def _send(
        self,
        method: str,
        url: str,
        what: str,
        *,
        ok: tuple[int, ...],
        params: dict[str, Any] | None = None,
        body: Any = None,
        stream: bool = False,
        redirects: bool = True,
        authorize: bool = True,
        refused: str | None = None,
    ) -> requests.Response:
        """The response whose status is in ``ok``, after bounded retries (not of a POST that
        may have been done); otherwise an ApiError (``refused``: its hint for a 4xx)."""
        repeatable = method != "POST"
        attempt = 0
        while True:
            attempt += 1
            try:
                resp = self.session.request(
                    method,
                    url,
                    params=params,
                    json=body,
                    headers=self._headers_for(url) if authorize else {},
                    timeout=self.timeout,
                    stream=stream,
                    allow_redirects=redirects,
                )
            except requests.RequestException as exc:
                reason = self._redact(type(exc).__name__ + ": " + str(exc))
                if attempt > self.max_retries or not repeatable:
                    raise ApiError(
                        f"{what}: could not reach the API after {attempt} attempts ({reason}); "
                        "check --api-url and the network"
                    ) from None
                delay = self.backoff * 2 ** (attempt - 1)
                self._note(f"{what}: connection failed ({reason}); retry {attempt} in {delay:.0f}s")
                self.sleep(delay)
                continue

            status = resp.status_code
            if status in ok:
                return resp
            if status in (403, 429):
                wait = self._rate_limit_wait(resp)
                if wait is not None:
                    resp.close()
                    if wait > self.max_wait or attempt > self.max_retries:
                        raise ApiError(
                            f"{what}: rate limited (HTTP {status}); GitHub asks to wait {wait:.0f}s, "
                            f"more than allowed (max wait {self.max_wait:.0f}s, {attempt} attempts made); "
                            "try again later or raise --max-wait",
                            status,
                        )
                    self._note(
                        f"{what}: rate limited (HTTP {status}); waiting {wait:.0f}s as GitHub asks"
                    )
                    self.sleep(wait)
                    continue
            if status >= 500:
                resp.close()
                if attempt > self.max_retries or not repeatable:
                    raise ApiError(
                        f"{what}: server error HTTP {status} persisted over {attempt} attempts; "
                        "GitHub may be degraded, try again later",
                        status,
                    )
                delay = self.backoff * 2 ** (attempt - 1)
                self._note(f"{what}: HTTP {status}; retry {attempt} in {delay:.0f}s")
                self.sleep(delay)
                continue
            error = self._error(resp, what, refused)
            resp.close()
            raise error

    def _json(self, resp: requests.Response, what: str) -> Any:
        try:
            return resp.json()
        except ValueError:
            snippet = self._redact(resp.text)[:80]  # redact before cutting
            raise ApiError(f"{what}: malformed answer, expected JSON but got {snippet!r}") from None

    def _error(self, resp: requests.Response, what: str, hint: str | None = None) -> ApiError:
        try:
            message = str(resp.json().get("message", ""))
        except (ValueError, AttributeError):
            message = ""
        message = " ".join(self._redact(message).split())[:300]  # the error stays one line
        hint = hint or {
            401: "the token was rejected: check GITHUB_TOKEN/GH_TOKEN is valid and not expired",
            403: "the token lacks permission: it needs 'actions: read' (audit, artifacts) or "
            "'actions: write' (prune)",
            404: "not found: check --repo and --api-url, and that the token can see the repository",
        }.get(resp.status_code, "unexpected answer")
        detail = f" ({message})" if message else ""
        return ApiError(f"{what}: HTTP {resp.status_code}{detail}: {hint}", resp.status_code)

    # -- endpoints --------------------------------------------------------

    def paginate(
        self, path: str, item_field: str, params: dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield items from every page, following ``Link: rel="next"``."""
        url: str | None = self._url(path)
        query: dict[str, Any] | None = {"per_page": PER_PAGE, **(params or {})}
        pages = 0
        while url:
            pages += 1
            if pages > MAX_PAGES:
                raise ApiError(
                    f"GET {path}: more than {MAX_PAGES} pages; stopping (Link header loop?)"
                )
            resp = self.request("GET", url, params=query)
            data = resp.data
            if not isinstance(data, dict) or not isinstance(data.get(item_field), list):
                raise ApiError(
                    f"GET {path}: malformed answer, expected an object with a list '{item_field}'"
                )
            yield from data[item_field]
            url = parse_link_header(resp.headers.get("Link") or resp.headers.get("link")).get(
                "next"
            )
            if url and urlsplit(url).netloc != self._origin[1]:
                raise ApiError(
                    f"GET {path}: pagination points to another host; refusing to follow it"
                )
            query = None  # the next URL carries its own query

    def list_caches(self, repo: str, **params: Any) -> list[dict[str, Any]]:
        return list(
            self.paginate(f"/repos/{check_repo(repo)}/actions/caches", "actions_caches", params)
        )

    def cache_usage(self, repo: str) -> dict[str, Any]:
        data = self.request("GET", f"/repos/{check_repo(repo)}/actions/cache/usage").data
        if not isinstance(data, dict) or not isinstance(
            data.get("active_caches_size_in_bytes"), int
        ):
            raise ApiError(
                f"GET /repos/{repo}/actions/cache/usage: malformed answer, "
                "expected active_caches_size_in_bytes"
            )
        return data

    def _optional(self, path: str, field: str) -> int | None:
        """An endpoint that may be absent (GHES) or forbidden: None instead of failing."""
        try:
            data = self.request("GET", path).data
        except ApiError as exc:
            if exc.status in (403, 404, 410, 501):
                self.events.append(f"GET {path}: HTTP {exc.status}, using the default")
                return None
            raise
        value = data.get(field) if isinstance(data, dict) else None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ApiError(f"GET {path}: malformed answer, expected a positive integer '{field}'")
        return value

    def storage_limit_gb(self, repo: str) -> int | None:
        """Repository cache size limit in GB (storage-limit, else the GHES usage-policy)."""
        base = f"/repos/{check_repo(repo)}/actions/cache"
        value = self._optional(f"{base}/storage-limit", "max_cache_size_gb")
        if value is None:
            value = self._optional(f"{base}/usage-policy", "repo_cache_size_limit_in_gb")
        return value

    def retention_days(self, repo: str) -> int | None:
        return self._optional(
            f"/repos/{check_repo(repo)}/actions/cache/retention-limit", "max_cache_retention_days"
        )

    def delete_cache(self, repo: str, cache_id: int) -> bool:
        """Delete by id; False if it was already gone (404)."""
        try:
            self.request(
                "DELETE", f"/repos/{check_repo(repo)}/actions/caches/{int(cache_id)}", ok=(204, 200)
            )
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def delete_by_key(self, repo: str, key: str, ref: str | None = None) -> list[dict[str, Any]]:
        """Delete every entry with ``key`` (optionally only on ``ref``); returns what went."""
        params = {"key": key, **({"ref": ref} if ref else {})}
        resp = self.request(
            "DELETE", f"/repos/{check_repo(repo)}/actions/caches", params=params, ok=(200,)
        )
        data = resp.data
        if not isinstance(data, dict) or not isinstance(data.get("actions_caches"), list):
            raise ApiError(
                f"DELETE /repos/{repo}/actions/caches: malformed answer, expected 'actions_caches'"
            )
        return data["actions_caches"]

    def pull_state(self, repo: str, number: int) -> str | None:
        """'open' / 'closed', or None if the pull request cannot be seen."""
        try:
            data = self.request("GET", f"/repos/{check_repo(repo)}/pulls/{int(number)}").data
        except ApiError as exc:
            if exc.status in (403, 404):
                self.events.append(
                    f"GET /repos/{repo}/pulls/{number}: HTTP {exc.status}, state unknown, its caches "
                    "are kept (a private repository needs 'pull-requests: read'; or pass --closed-pr N)"
                )
                return None
            raise
        state = data.get("state") if isinstance(data, dict) else None
        if state not in ("open", "closed"):
            raise ApiError(
                f"GET /repos/{repo}/pulls/{number}: malformed answer, expected state open/closed"
            )
        return state
