"""The printed report of a benchmark's figures (a fresh run's or a saved ``--json``):
the machine, throughput, ratios, overhead, profile, shards, memory, batching, targets."""

from __future__ import annotations

from typing import Any

from .ratios import RATIOS, unstable_ratios

PHASE_LABELS = {
    "baseline": "baseline, pip tool scripts",
    "baseline-native": "baseline, native binaries",
    "cold": "ours cold (empty store)",
    "cold-unbatched": "ours cold, --batch-size 1",
    "warm": "ours warm (filled store)",
    "cold-nothreads": "ours cold, MLIR threading off",
}


def format_report(figures: dict[str, Any]) -> str:
    out: list[str] = []
    m = figures["machine"]
    out.append("== Machine")
    out.append(
        f"nproc {m['nproc']}, {m['cpu']}, {m['ram_gib']} GiB RAM, {m['platform']}, Python {m['python']}"
    )
    out.append("versions: " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()))
    out.append(
        f"load average at start: {m['loadavg_start']} (shared machine: read the ratios, not absolute times)"
    )
    if not m.get("children_cpu", True):
        out.append(
            "CPU seconds: not measured on this OS (no resource.RUSAGE_CHILDREN); CPU ratios are left out"
        )
    s = figures["sample"]
    out.append(
        f"sample: {s['onnx']} ONNX operator cases + {s['stablehlo']} StableHLO cases from {s['file']}; {figures['workers']} cases at a time on every side"
    )
    rounds = figures.get("rounds", [])
    if rounds:
        out.append("")
        out.append(
            "== Throughput (wall clock of the whole run; CPU = user+sys of all its processes)"
        )
        out.append(
            f"{'phase':<32}{'cases':>6}{'pass':>6}{'wall s':>9}{'cases/min':>11}{'CPU s':>9}{'CPU s/case':>12}  load after"
        )
        for n, phases in enumerate(rounds):
            if len(rounds) > 1:
                out.append(f"-- round {n + 1}")
            for key, label in PHASE_LABELS.items():
                p = phases.get(key)
                if p:
                    out.append(
                        f"{label:<32}{p['cases']:>6}{p['passed']:>6}{p['wall_s']:>9.1f}{p['cases_per_min']:>11.1f}{p['cpu_s']:>9.1f}{p['cpu_s_per_case']:>12.3f}  {p['loadavg_after']}"
                    )
        last = rounds[-1]
        for key in PHASE_LABELS:
            st = last.get(key, {}).get("stage_mean_s")
            if st:
                out.append(
                    f"{key} mean s/case by stage: "
                    + ", ".join(f"{k} {v:.3f}" for k, v in st.items() if v)
                )
        if last.get("mismatches"):
            out.append(f"verdicts differ between phases: {last['mismatches']}")
    r = figures.get("ratios", {})
    if r:
        out.append("")
        title = (
            "== Ratios of cases/min"
            + (f" (median of {len(rounds)} rounds)" if len(rounds) > 1 else "")
            + "; CPU-seconds ratio in brackets"
        )
        out.append(title)
        for key, _, _, label in RATIOS:
            if key in r:
                line = (
                    f"{label:<36} {r[key]:>7.2f}x   [CPU {r.get(key + '_cpu', float('nan')):.2f}x]"
                )
                if len(rounds) > 1:
                    per_round = [
                        x["ratios"].get(key)
                        for x in rounds
                        if x.get("ratios", {}).get(key) is not None
                    ]
                    per_round_cpu = [
                        x["ratios"].get(key + "_cpu")
                        for x in rounds
                        if x.get("ratios", {}).get(key + "_cpu") is not None
                    ]
                    line += f"   rounds: {', '.join(f'{v:.2f}' for v in per_round)} [CPU {', '.join(f'{v:.2f}' for v in per_round_cpu)}]"
                out.append(line)
        spread = unstable_ratios(rounds)
        if spread:
            out.append(
                f"NOTE: the cases/min ratios moved by more than 25% between rounds ({', '.join(spread)}): the machine's load changed under the phases; the CPU-seconds ratios are the steadier figure."
            )
    o = figures.get("overhead", {})
    if o:
        out.append("")
        out.append(
            "== Overhead per case outside IREE's import/compile/load/run (ms), from the results JSON"
        )
        for key in ("cold", "warm"):
            st = o.get(key)
            if st and st.get("count"):
                out.append(
                    f"{key}: mean {st['mean_ms']:.1f}, median {st['median_ms']:.1f}, p90 {st['p90_ms']:.1f}, max {st['max_ms']:.1f} over {st['count']} cases"
                )
                out.append(
                    "   split (mean ms/case): "
                    + ", ".join(f"{k} {v:.2f}" for k, v in st["split_ms_mean"].items())
                )
        for key in ("cold", "warm"):
            p = o.get(f"pytest_{key}")
            if p:
                out.append(
                    f"pytest {key}: wall/case {p['wall_per_case_ms']:.0f} ms; wall - sum(case durations)/workers = "
                    f"{p['fixed_s']:.1f} s outside cases (pytest start, collection, xdist, teardown, batch jobs) = {p['fixed_per_case_ms']:.0f} ms/case"
                )
    pr = figures.get("profile")
    if pr:
        p = pr["parent"]
        out.append("")
        out.append("== Profile: warm pipeline through one WorkerClient, steady state (cProfile)")
        out.append(
            f"worker process start: {p['worker_start_s']:.2f} s; first two cases (runtime import, device): {p['first_use_s']:.2f} s; once per pytest worker"
        )
        if p.get("count"):
            out.append(
                f"per case: duration {1000 * p['duration_s_mean']:.2f} ms, of which IREE load+run {1000 * p['iree_s_mean']:.2f} ms; "
                f"overhead mean {p['mean_ms']:.2f} / median {p['median_ms']:.2f} / p90 {p['p90_ms']:.2f} ms"
            )
            out.append(
                "split (mean ms/case): "
                + ", ".join(f"{k} {v:.2f}" for k, v in p["split_ms_mean"].items())
            )
            if "loop_overhead_ms" in p:
                out.append(
                    f"in batches: {p.get('batched', 0)} of {p['count'] // max(1, figures.get('profile_rounds', 1))} cases a round, {p.get('batch_jobs_per_round', 0)} batch jobs a round (store lookups), "
                    f"{p.get('compiled', 0)} compiles; whole loop per case, batch jobs included, less IREE load+run: {p['loop_overhead_ms']:.2f} ms"
                )
        c = pr.get("cold")
        if c and c.get("count"):
            out.append(
                f"cold, {c['count']} cases in a started worker: duration {1000 * c['duration_s_mean']:.0f} ms, IREE import+compile+load+run {1000 * c['iree_s_mean']:.0f} ms; "
                f"overhead mean {c['mean_ms']:.2f} / median {c['median_ms']:.2f} / p90 {c['p90_ms']:.2f} ms"
            )
            out.append(
                "   split (mean ms/case): "
                + ", ".join(f"{k} {v:.2f}" for k, v in c["split_ms_mean"].items())
            )
        out.append(
            f"worker side alone, in-process (key, store read, load, run): {pr['worker_ms_per_job']:.2f} ms/job; top functions by own time:"
        )
        out += ["   " + line for line in pr["worker_top"][:12]]
        out.append(
            "parent side (the pytest worker) top functions by own time; lock waits = waiting for the worker:"
        )
        out += ["   " + line for line in pr["parent_top"][:12]]
    sh = figures.get("shards")
    if sh:
        out.append("")
        out.append("== Shard balance of --shard I/N on the durations the cold run recorded")
        for n, v in sh.items():
            out.append(
                f"N={n}: longest shard {v['max_s']:.1f} s, shortest {v['min_s']:.1f} s, spread {100 * v['spread']:.1f}%"
            )
    mem = figures.get("memory")
    if mem:
        out.append("")
        out.append(
            f"== Worker RSS over {figures.get('memory_jobs', '?')} jobs (sample cycled, every {figures.get('memory_cold_every', '?')}th job a cold compile), two workers side by side"
        )
        for label, v in mem.items():
            if "error" in v:
                out.append(f"{label}: {v['error']}")
                continue
            out.append(
                f"{label}: {v['worker_processes']} worker process(es); RSS at job 100 {v['rss_mb_at_100']:.0f} MB, at job {v['jobs']} {v['rss_mb_at_end']:.0f} MB "
                f"(growth {v['rss_growth_mb']:+.0f} MB); peak VmHWM {v['peak_hwm_mb']:.0f} MB; {v['statuses']}; {v['wall_s']:.0f} s"
            )
            out.append(f"   RSS (MB) every 100 jobs: {v['rss_mb_every_100']}")
    out += format_batching(figures)
    out.append("")
    out.append("== Targets")
    out += figures.get("verdicts", [])
    return "\n".join(out)


def format_batching(figures: dict[str, Any]) -> list[str]:
    """The report's sections on batching: verdicts against --batch-size 1, the bisection
    cost, CPU and peak RSS per batch size, MLIR threading."""
    out: list[str] = []
    same = figures.get("batched_vs_unbatched")
    if same is not None:
        out.append("")
        out.append(
            "== Batched (cold) against --batch-size 1 (cold-unbatched), case by case on status, stage, verdict"
        )
        out.append(
            f"{same['compared']} cases compared; {len(same['differ'])} differ; only batched {len(same['only_in_a'])}, only unbatched {len(same['only_in_b'])}"
        )
        for case_id, d in list(same["differ"].items())[:10]:
            out.append(
                f"   {case_id}: "
                + ", ".join(f"{f} {a} (batched) vs {b}" for f, (a, b) in d.items())
            )
    bs = figures.get("bisection")
    if bs:
        out.append("")
        if "error" in bs:
            out.append(f"== Bisection: {bs['error']}")
        else:
            out.append(
                f"== Bisection: a batch of {bs['size']} StableHLO cases through BatchCoordinator + WorkerClient (started worker, empty store); worker CPU from /proc"
            )
            for label in ("clean", "one failing", "one failing, culprits hidden"):
                v = bs.get(label)
                if not v:
                    continue
                cpu = f"{v['worker_cpu_s']:.2f}" if v.get("worker_cpu_s") is not None else "?"
                extra = (
                    f"; vs clean: wall {v['wall_vs_clean']:.2f}x, CPU {v.get('cpu_vs_clean', float('nan')):.2f}x"
                    if "wall_vs_clean" in v
                    else ""
                )
                out.append(
                    f"{label:<30} {v['cases']:>3} cases {v['batch_compiles']:>3} batch compile(s)  placed {v['placed']:>3}  wall {v['wall_s']:6.2f} s  worker CPU {cpu} s{extra}"
                )
    rs = figures.get("batch_rss")
    if rs:
        out.append("")
        if "error" in rs:
            out.append(f"== Batch size: {rs['error']}")
        else:
            out.append(
                f"== Batch size: the same {rs['cases']} cases (one group) compiled in batches of each size; fresh worker, empty store per size"
            )
            out.append(
                f"{'size':>5}{'batches':>9}{'wall s':>9}{'CPU s':>8}{'CPU s/case':>12}{'peak RSS MB':>13}  statuses"
            )
            for size, v in rs["sizes"].items():
                cpu = (
                    f"{v['cpu_s']:8.1f}{v['cpu_s_per_case']:12.3f}"
                    if v.get("cpu_s") is not None
                    else f"{'?':>8}{'?':>12}"
                )
                out.append(
                    f"{size:>5}{v['batches']:>9}{v['wall_s']:>9.1f}{cpu}{v['peak_rss_mb'] or 0:>13.0f}  {v['statuses']}"
                )
            ch = rs.get("choice") or {}
            if ch:
                out.append(
                    f"choice: batch size {ch['size']} (the smallest within {100 * ch['cpu_slack']:.0f}% of the best CPU s/case, size {ch['fastest']}, with peak RSS <= {ch['rss_limit_mb']:.0f} MB)"
                )
    th = figures.get("threads")
    if th:
        out.append("")
        out.append(
            "== MLIR threading in the workers, cold runs (pytest -n 2 on the machine's cores)"
        )
        out.append(
            "Session.set_flags: "
            + ", ".join(
                f"{k} {'accepted' if v is True else 'rejected (' + str(v) + ')'}"
                for k, v in th.get("session_flags", {}).items()
            )
        )
        out.append(
            f"global command-line flags given to the workers: {th.get('global_flags')} (worker processes that took them: {th.get('workers_with_flags', '?')})"
        )
        r = figures.get("ratios", {})
        if "nothreads_vs_cold_cpu" in r:
            out.append(
                f"threading off / default: {1 / r['nothreads_vs_cold_cpu']:.3f}x the CPU seconds, {1 / r['nothreads_vs_cold']:.3f}x the wall clock"
            )
    return out
