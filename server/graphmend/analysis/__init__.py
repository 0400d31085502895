"""Facts about code that the rules and the rewrites share: purity of calls, liveness of names,
shapes of values, the parts of a condition, the configuration a break depends on, and the facts
other files' code contributes. Below both `rules/` and `fixes/`: it imports neither."""
