"""What a case, target, job, outcome and results file are."""
