"""act's JSON log (`act --json`) into jobs, steps, cache events and artifacts.

Each line is one JSON object; the ones that matter carry `jobID`, `matrix`, `step`,
`stage` (Pre, Main, Post), `stepResult` (success, failure, skipped) when a step ends,
`jobResult` when a job ends, and `raw_output: true` for what a step printed (`msg`).

Cache events come from what the steps print (a composite action's inner steps log under
the outer step's name, with `stepID` [outer, inner]; the class is read from the key,
`{class}-v{schema}-...`):

- actions/cache/restore: "Cache restored from key: K" (exact when K is the primary key,
  which `cache-tools key` printed in the step before), "Cache not found for input keys: ..."
- ci/cache_shards.py plan (the cache-save composite action's "Plan the save (CLASS)"):
  `cache-tools plan` prints "save:    true|false", "reason:  CODE", "why:     ..."
  (a sharded class: "CLASS: REASON" after the shard table)
- actions/cache/save: "Cache saved with key: K" and "Cache Size: ~N MB (B B)"

Artifacts: upload-artifact's "Artifact NAME has been successfully uploaded! Final size
is N bytes" and download-artifact's "Total of N artifact(s) downloaded".

Annotations: act decodes the workflow commands a step prints (`::error file=F,line=L,
title=T::M`) into `command` (error, warning, notice), `kvPairs` (the properties,
unescaped) and `arg` (the message, unescaped).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_CLASS_IN_STEP = re.compile(r"\((?P<cls>[A-Za-z0-9_.-]+)\)\s*$")
_RESTORED = re.compile(r"Cache restored from key:\s*(?P<key>\S+)")
_NOT_FOUND = re.compile(r"Cache not found for input keys:\s*(?P<keys>.+)")
_SAVED = re.compile(r"Cache saved with key:\s*(?P<key>\S+)")
_SIZE = re.compile(r"Cache Size: ~?[\d.]+ MB \((?P<bytes>\d+) B\)")
_KEY_LINE = re.compile(r"^key[=:]\s*(?P<key>\S+)$")
_PLAN_CMD = re.compile(r"^\+ cache-tools (?:plan|key) .*--class (?P<cls>\S+)")
_KEY_CLASS = re.compile(r"^(?P<cls>[A-Za-z0-9][A-Za-z0-9-]*?)-v\d+-")
_PLAN_SAVE = re.compile(r"^save:\s+(?P<save>true|false)$")
_PLAN_REASON = re.compile(r"^reason:\s+(?P<reason>\S+)$")
_PLAN_WHY = re.compile(r"^why:\s+(?P<why>.+)$")
_REASON_ONLY = re.compile(r"^(?P<cls>[A-Za-z0-9_.-]+):\s*(?P<reason>[a-z].*)$")
_UPLOADED = re.compile(
    r"Artifact (?P<name>\S+) has been successfully uploaded! Final size is (?P<size>\d+) bytes"
)
_DOWNLOADED = re.compile(r"Total of (?P<count>\d+) artifact\(s\) downloaded")
RESULTS = ("success", "failure", "skipped", "cancelled")


@dataclass
class StepRecord:
    name: str
    result: str = "unknown"
    stage: str = "Main"

    def to_json(self) -> dict[str, Any]:
        label = self.name if self.stage == "Main" else f"{self.stage} {self.name}"
        return {"name": label, "result": self.result}


@dataclass
class JobRecord:
    workflow: str
    job: str
    matrix: dict[str, Any]
    result: str = "unknown"
    steps: list[StepRecord] = field(default_factory=list)

    def step(self, name: str, stage: str) -> StepRecord:
        for s in self.steps:
            if s.name == name and s.stage == stage:
                return s
        s = StepRecord(name, stage=stage)
        self.steps.append(s)
        return s

    def to_json(self) -> dict[str, Any]:
        return {
            "workflow": self.workflow,
            "job": self.job,
            "matrix": self.matrix,
            "result": self.result,
            "steps": [s.to_json() for s in self.steps],
        }


@dataclass
class CacheEvent:
    job: str
    action: str  # key, restore, plan, save
    cls: str
    key: str = ""
    result: str = ""  # restore: exact|prefix|miss; plan: save|skip; save: saved
    reason: str = ""
    size: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "job": self.job,
            "action": self.action,
            "class": self.cls,
            "key": self.key,
            "result": self.result,
        }
        if self.reason:
            data["reason"] = self.reason
        if self.size is not None:
            data["size"] = self.size
        return data


@dataclass
class ArtifactEvent:
    job: str
    action: str  # upload, download
    name: str
    size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "action": self.action, "name": self.name, "size": self.size}


def key_class(key: str) -> str:
    """The cache class a key belongs to (`{class}-v{schema}-...`, cache_tools' grammar)."""
    m = _KEY_CLASS.match(key)
    return m.group("cls").lower() if m else ""


def step_class(step: str) -> str:
    m = _CLASS_IN_STEP.search(step)
    return m.group("cls") if m else ""


class LogParser:
    """Feed act's JSON lines one at a time; `feed` returns the cache saves it saw."""

    def __init__(self, workflow_file: str) -> None:
        self.workflow_file = workflow_file
        self.jobs: dict[str, JobRecord] = {}
        self.caches: list[CacheEvent] = []
        self.artifacts: list[ArtifactEvent] = []
        self.other: list[str] = []  # lines that are not JSON (act's own errors)
        self.annotations: list[dict[str, Any]] = []
        self._primary: dict[tuple[str, str], str] = {}  # (job, class) -> key
        self._pending_size: dict[str, int] = {}
        self._plan_save: dict[tuple[str, str], bool] = {}
        self._plan_class: dict[tuple[str, str], str] = {}

    def feed(self, line: str) -> list[CacheEvent]:
        line = line.strip()
        if not line:
            return []
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            self.other.append(line)
            return []
        if not isinstance(rec, dict) or "jobID" not in rec:
            if isinstance(rec, dict) and rec.get("level") in ("error", "fatal"):
                self.other.append(str(rec.get("msg", "")))
            return []
        matrix = rec.get("matrix") or {}
        label = f"{rec['jobID']} {json.dumps(matrix, sort_keys=True)}"
        job = self.jobs.get(label)
        if job is None:
            job = self.jobs[label] = JobRecord(self.workflow_file, rec["jobID"], dict(matrix))
        if rec.get("jobResult"):
            job.result = str(rec["jobResult"])
        step_name = rec.get("step")
        stage = rec.get("stage")
        if step_name and (stage == "Main" or (stage in ("Pre", "Post") and rec.get("stepResult"))):
            # A composite action's inner steps log under the outer step's name; the outer
            # step's own result comes last.
            step = job.step(step_name, stage)
            if rec.get("stepResult"):
                step.result = str(rec["stepResult"])
        if rec.get("command") in ("error", "warning", "notice") and step_name:
            pairs = rec.get("kvPairs")
            props: dict[str, Any] = pairs if isinstance(pairs, dict) else {}
            self.annotations.append(
                {
                    "job": job.job,
                    "step": str(step_name),
                    "level": rec["command"],
                    "file": props.get("file"),
                    "line": int(props["line"]) if str(props.get("line", "")).isdigit() else None,
                    "title": props.get("title", ""),
                    "message": str(rec.get("arg", "")),
                }
            )
        if rec.get("raw_output") and step_name:
            ids = rec.get("stepID") or []
            inner = str(ids[1]) if isinstance(ids, list) and len(ids) > 1 else ""
            return self._output(job, str(step_name), inner, str(rec.get("msg", "")))
        return []

    def _output(self, job: JobRecord, step: str, inner: str, msg: str) -> list[CacheEvent]:
        where = (job.job, step)
        saved: list[CacheEvent] = []
        planning = inner == "plan" or step.startswith("Plan the save")
        for text in msg.splitlines():
            text = text.strip()
            if not text:
                continue
            if planning:
                self._plan_line(job, where, step, text)
            elif (m := _KEY_LINE.match(text)) is not None and inner in ("key", ""):
                cls = key_class(m.group("key"))
                if cls:
                    self._primary[(job.job, cls)] = m.group("key")
                    self.caches.append(CacheEvent(job.job, "key", cls, m.group("key"), "computed"))
            if (m := _RESTORED.search(text)) is not None:
                key = m.group("key")
                cls = key_class(key)
                # actions/cache compares keys ignoring case (act's cache server lowercases them)
                exact = self._primary.get((job.job, cls), "").lower() == key.lower()
                self.caches.append(
                    CacheEvent(job.job, "restore", cls, key, "exact" if exact else "prefix")
                )
            elif (m := _NOT_FOUND.search(text)) is not None:
                key = m.group("keys").split(",")[0].strip()
                self.caches.append(CacheEvent(job.job, "restore", key_class(key), key, "miss"))
            elif (m := _SIZE.search(text)) is not None:
                self._pending_size[job.job] = int(m.group("bytes"))
            elif (m := _SAVED.search(text)) is not None:
                key = m.group("key")
                event = CacheEvent(
                    job.job,
                    "save",
                    key_class(key),
                    key,
                    "saved",
                    size=self._pending_size.pop(job.job, None),
                )
                self.caches.append(event)
                saved.append(event)
            if (m := _UPLOADED.search(text)) is not None:
                self.artifacts.append(
                    ArtifactEvent(job.job, "upload", m.group("name"), int(m.group("size")))
                )
            elif (m := _DOWNLOADED.search(text)) is not None:
                self.artifacts.append(
                    ArtifactEvent(job.job, "download", f"{m.group('count')} artifact(s)")
                )
        return saved

    def _plan_line(self, job: JobRecord, where: tuple[str, str], step: str, text: str) -> None:
        """`cache-tools plan`'s output, as ci/cache_shards.py plan prints it."""
        if (m := _PLAN_CMD.search(text)) is not None:
            self._plan_class[where] = m.group("cls")
            return
        cls = self._plan_class.get(where) or step_class(step)
        if (m := _PLAN_SAVE.match(text)) is not None:
            self._plan_save[where] = m.group("save") == "true"
        elif (m := _PLAN_REASON.match(text)) is not None and where in self._plan_save:
            save = self._plan_save.pop(where)
            self.caches.append(
                CacheEvent(
                    job.job,
                    "plan",
                    cls,
                    self._primary.get((job.job, cls), ""),
                    "save" if save else "skip",
                    m.group("reason"),
                )
            )
        elif (
            (m := _PLAN_WHY.match(text)) is not None
            and self.caches
            and self.caches[-1].action == "plan"
        ):
            self.caches[-1].reason += f" ({m.group('why')})"
        elif (
            (m := _KEY_LINE.match(text)) is not None
            and self.caches
            and self.caches[-1].action == "plan"
        ):
            self.caches[-1].key = m.group("key")  # the key the save would use
        elif (m := _REASON_ONLY.match(text)) is not None and m.group("cls") == cls:
            # a sharded class: ci/cache_shards.py's last line "CLASS: REASON"
            reason = m.group("reason")
            self.caches.append(
                CacheEvent(
                    job.job,
                    "plan",
                    cls,
                    self._primary.get((job.job, cls), ""),
                    "save" if re.match(r"save [1-9]", reason) else "skip",
                    reason,
                )
            )

    def feed_all(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.feed(line)

    def job_records(self) -> list[JobRecord]:
        return list(self.jobs.values())
