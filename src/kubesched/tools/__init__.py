"""Tools that decide as `kubesched run` does without binding: explain (per-node verdicts), simulate
(what-if placement on a snapshot) and shadow (beside a live scheduler). They call the framework's
runtime; they never copy it."""
