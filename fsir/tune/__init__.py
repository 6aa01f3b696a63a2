"""Auto-tuning of stitch-codegen's kernel configurations (issue 28: Ansor in fsir).

MetaSchedule's split, one module per concept:

- `task`: the fusions of a model as tuning tasks (workload keys, today's choice) and
  the hook that applies a tuning log in stitch-codegen;
- `space`: the search space as data: sketches per mapping, traces of decisions,
  random annotation, mutation, static checks;
- `measure`: measurers (`model`: the simulator's counters of sampled blocks turned
  into time by the timeline model) in a process pool, with typed errors;
- `cost_model`: XGBoost on features of the mappings' summaries, learning the residual
  against the latency-evaluator (the prior);
- `search`: evolutionary search (Ansor §5), random search, the prior's top-k;
- `database`: the JSON-lines log;
- `cli`: `fs-tune`.

docs/tuning.md describes the design and the figures measured.
"""
