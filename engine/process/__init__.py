"""The job as a process: how its worker starts, runs, is contained, measured and ended.

``supervise`` (the driver's side: ``run_job``) starts a job's worker through ``launch`` (exec a
fresh ``python -m srtui.engine.process.job_worker JOBDIR``, or fork it from a ``fork_server``, whose
child is set up by ``fork_child``), enforces the job's limits on its whole process ``tree`` (and
its ``cgroups`` v2 group where there is one), and reads back the files the worker wrote
(``job_files``); what a job is handed and returns, ``JobPayload`` and ``JobOutcome``, is ``job_io``.
``job_worker`` runs the method's fit inside the job and measures its ``energy``; before any of the
method's code, ``seal`` shuts the job in namespaces of its own (what it sees: its training data).

This package's ``__init__`` imports nothing: a method environment's interpreter (its own pinned
packages, none of srtui's but numpy and psutil) imports these modules from srtui's engine too.
"""
