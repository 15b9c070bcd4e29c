"""The measurements of benchmarks/suite_speed.py (its command line), one module each.

- sample: the fixed case list, the suites' Case objects, their cold variants and groups
- baseline: a case the way the IREE test suites drive IREE (one process per tool)
- phases: the timed phases (baseline, pytest cold / cold-unbatched / warm / nothreads)
- outcome_stats: figures from the runs' outcomes: overhead, stage means, shards, diffs
- ratios: the ratios between phases, per round and their median
- pipeline_profile: the pipeline under cProfile, warm and cold, in a started worker
- memory: a worker's RSS over a long run, with and without recycling
- bisection: the cost of a batch with one case that fails to compile
- batch_size: CPU seconds per case and peak RSS per batch size
- threads: MLIR threading off in the workers (IREE's global command line)
- machine: the machine, its load, and the CPU and RSS of processes
- selection: re-picking the sample (--select)
- run: one benchmark run, every measurement in order
- report, targets: the printed report and its MET / MISSED lines
"""
