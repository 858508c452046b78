"""The task catalogue: generators, loaders, ground truth and suites."""
