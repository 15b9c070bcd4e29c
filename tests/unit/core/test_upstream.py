"""compare-upstream: an iree-test-suites config against our results."""

import http.server
import json
import subprocess
import sys
import threading

import pytest

from iree_conformance.expectations import upstream

CONFIG = """{
  "config_name": "cpu_llvm_sync",
  // IREE CI's flags for this lane
  "iree_compile_flags": ["--iree-hal-target-backends=llvm-cpu", "--iree-input-demote-f64-to-f32=false"],
  "skip_compile_tests": ["onnx/node/generated/test_skipped"],
  "skip_run_tests": [],
  "expected_compile_failures": [
    "onnx/node/generated/test_both_fail", // TODO(#1): a comment after an entry
    "onnx/node/generated/test_they_fail",
    "onnx/node/generated/test_with // slashes in a name",
  ],
  "expected_run_failures": ["onnx/node/generated/test_they_fail_run", "some/other/path"]
}
"""


def outcome(case, status="pass", stage="compare", line=""):
    return {
        "case_id": f"onnx-ops/{case}",
        "suite": "onnx_ops",
        "target": "llvm-cpu",
        "status": status,
        "stage": stage,
        "diagnostics": [line] if line else [],
    }


RESULTS = {
    "metadata": {},
    "outcomes": [
        outcome(
            "test_both_fail",
            "error",
            "compile",
            "error: failed to legalize 'torch.operator' onnx.Foo",
        ),
        outcome("test_they_fail"),
        outcome("test_they_fail_run"),
        outcome("test_we_fail", "fail", "compare", "output 0: dtype int8 != expected uint8"),
        outcome("test_we_fail_2", "fail", "compare", "output 0: dtype int8 != expected uint8"),
        outcome("test_pass"),
        outcome("test_skipped", "error", "compile", "boom"),
        outcome("test_new_op", "error", "compile", "error: x"),
        outcome("test_new_op_2"),
        outcome("test_sequence", "skip"),
    ],
}


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text(CONFIG)
    return path


def test_jsonc_config_maps_paths_to_case_ids(config_file):
    view = upstream.upstream_view(upstream.load_config(str(config_file)))
    assert view.kind("onnx-ops/test_both_fail") == "fail-compile"
    assert view.kind("onnx-ops/test_they_fail_run") == "fail-run"
    assert view.kind("onnx-ops/test_pass") == "pass"
    assert view.skipped == {"onnx-ops/test_skipped"}
    assert view.unmapped == [
        "onnx/node/generated/test_with // slashes in a name",
        "some/other/path",
    ]
    assert "--iree-input-demote-f64-to-f32=false" in view.flags


def test_agreement_table_categories_and_explanations(config_file, tmp_path):
    view = upstream.upstream_view(upstream.load_config(str(config_file)))
    ours = upstream.ours_from_results(RESULTS, "llvm-cpu")
    tests = {
        f"onnx-ops/{n}"
        for n in (
            "test_both_fail",
            "test_they_fail",
            "test_they_fail_run",
            "test_we_fail",
            "test_we_fail_2",
            "test_pass",
            "test_skipped",
        )
    }
    result = upstream.agree(ours, view, tests)
    assert result.table() == {
        "fail in both": 1,
        "pass in both": 1,
        "we fail, IREE's CI passes": 2,
        "IREE's CI fails, we pass": 2,
    }
    assert result.beyond == ["onnx-ops/test_new_op", "onnx-ops/test_new_op_2"]
    notes = {"onnx-ops/test_they_fail": {"why": "version", "text": "fixed in IREE 3.13"}}
    data = upstream.report(ours, view, result, notes)
    [group] = data["we_fail_they_pass"]
    assert group["count"] == 2 and group["line"].startswith(
        "output N: dtype intN != expected uintN"
    )
    assert data["unexplained"] == ["onnx-ops/test_they_fail_run"]
    assert data["beyond_iree_ci"]["stage_pass_rates"] == {
        "import": 100.0,
        "compile": 50.0,
        "run": 50.0,
        "numerics": 50.0,
    }
    text = upstream.render(data)
    assert "| **we fail** | 2 | 1 |" in text and "Unexplained disagreements: 1" in text
    # A diagnostic line or case id with markup stays text in the step summary.
    group["line"] = "<script>alert(1)</script> `x`"
    data["unexplained"] = ["onnx-ops/<img src=x onerror=alert(1)>"]
    text = upstream.render(data)
    assert "<script>" not in text and "<img" not in text and "&lt;script&gt;" in text


def test_bad_config_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "expected_compile_failures": [\n    "a"\n    "b"\n  ]\n}\n')
    with pytest.raises(upstream.UpstreamError, match=r"bad.json:4: not an iree-test-suites config"):
        upstream.load_config(str(bad))
    other = tmp_path / "other.json"
    other.write_text('{"name": 1}')
    with pytest.raises(upstream.UpstreamError, match="no expected_compile_failures"):
        upstream.load_config(str(other))
    with pytest.raises(upstream.UpstreamError, match="cannot read the config"):
        upstream.load_config(str(tmp_path / "missing.json"))


def test_config_from_a_loopback_url_and_a_failed_download():
    body = CONFIG.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            if self.path == "/cfg.json":
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_error(404)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert (
            "onnx-ops/test_both_fail"
            in upstream.upstream_view(upstream.load_config(f"{base}/cfg.json")).expected
        )
        with pytest.raises(upstream.UpstreamError, match="cannot download the config"):
            upstream.load_config(f"{base}/missing.json")
    finally:
        server.shutdown()


def test_cli_json_and_exit_codes(config_file, tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"schema": 1, **RESULTS}))
    notes = tmp_path / "notes.toml"
    notes.write_text('[notes]\n"onnx-ops/test_they_fail" = { why = "version", text = "fixed" }\n')
    out = tmp_path / "cmp.json"
    base = [
        sys.executable,
        "-m",
        "iree_conformance.cli.main",
        "compare-upstream",
        str(config_file),
        "--results",
        str(results),
        "--notes",
        str(notes),
    ]
    proc = subprocess.run(
        [*base, "--json", str(out), "--fail-on-unexplained"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "We fail, IREE's CI passes (3)" in proc.stdout  # no test list: test_new_op counts too
    assert "every one of our operator tests is assumed to exist there" in proc.stdout
    assert f"Our verdicts from `{results}`" in proc.stdout
    assert json.loads(out.read_text())["table"]["pass in both"] == 2  # test_pass, test_new_op_2
    proc = subprocess.run([*base, "--target", "vmvx"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no ONNX operator results for target vmvx" in proc.stderr


def test_os_filter_and_a_test_list_of_bare_names(config_file, tmp_path):
    merged = {
        "outcomes": [{**o, "os": "linux"} for o in RESULTS["outcomes"]]
        + [{**outcome("test_pass", "error", "compile", "boom"), "os": "windows"}]
    }
    ours = upstream.ours_from_results(merged, "llvm-cpu", os_name="linux")
    assert ours.kinds["onnx-ops/test_pass"] == "pass"
    listed = tmp_path / "import_successes.txt"
    listed.write_text("test_pass\ntest_we_fail\nonnx/node/generated/test_both_fail\n")
    assert upstream.load_test_list(str(listed)) == {
        "onnx-ops/test_pass",
        "onnx-ops/test_we_fail",
        "onnx-ops/test_both_fail",
    }
