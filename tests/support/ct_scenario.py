"""A repository cache state shared by the audit, prune and plan tests."""

from __future__ import annotations

from tests.support.ct_fake_github import entry

GIB = 1024**3
MIB = 1024**2
NOW = "2025-03-10T12:00:00Z"
H = "0123456789abcdef"


def scenario() -> list[dict]:
    e = [
        # llvm-mlir on main: #1 superseded by #2 (protected class, default branch)
        entry(
            1,
            f"llvm-mlir-v1-Linux-X64-c{H}-f{'a' * 64}",
            "refs/heads/main",
            3 * GIB,
            "2025-03-01T00:00:00Z",
            "2025-03-04T00:00:00Z",
        ),
        entry(
            2,
            f"llvm-mlir-v1-Linux-X64-c{H}-f{'b' * 64}",
            "refs/heads/main",
            3 * GIB,
            "2025-03-09T00:00:00Z",
            "2025-03-10T10:00:00Z",
        ),
        entry(
            3,
            "zoo-models-v1-Linux-X64-s000-f00aa",
            "refs/heads/main",
            GIB,
            "2025-03-05T00:00:00Z",
            "2025-03-09T00:00:00Z",
        ),
        # pip-wheels: PR 12 is closed (and its entry is about to expire); PR 13 open, #6 superseded by #5
        entry(
            4,
            "pip-wheels-v1-Linux-X64-f1111",
            "refs/pull/12/merge",
            100 * MIB,
            "2025-03-03T00:00:00Z",
            "2025-03-03T18:00:00Z",
        ),
        entry(
            5,
            "pip-wheels-v1-Linux-X64-f2222",
            "refs/pull/13/merge",
            100 * MIB,
            "2025-03-09T00:00:00Z",
            "2025-03-09T00:00:00Z",
        ),
        entry(
            6,
            "pip-wheels-v1-Linux-X64-f3333",
            "refs/pull/13/merge",
            100 * MIB,
            "2025-03-08T00:00:00Z",
            "2025-03-08T00:00:00Z",
        ),
        entry(
            7,
            "ccache-Linux-abc",
            "refs/heads/feature",
            200 * MIB,
            "2025-03-07T00:00:00Z",
            "2025-03-07T00:00:00Z",
        ),
    ]
    # iree-artifacts thrash: 7 entries on different branches within a few hours
    for i in range(7):
        e.append(
            entry(
                100 + i,
                f"iree-artifacts-v1-Linux-X64-f{i:04x}",
                f"refs/heads/b{i}",
                50 * MIB,
                f"2025-03-09T0{i}:00:00Z",
                f"2025-03-09T0{i}:30:00Z",
            )
        )
    return e
