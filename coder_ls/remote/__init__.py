"""Steps of a `/task` run elsewhere (contract section 25, "Remote workers").

`snapshot.py` takes the workspace as the parent sees it (the base commit as a git bundle,
the uncommitted changes as a binary patch); `worker.py` is what runs on a worker: it builds
that repository in a temporary folder, runs the step's prompt with `coder-ls exec` (the
same agent, sandbox and policy, non-interactive: what would ask is denied and said) and
hands back the step's patch and transcript; `rayexec.py` sends steps to a Ray cluster,
cancels them and retries a lost worker's step once. `ray` is optional (`coder-ls[ray]`)
and imported only when a task uses it.
"""
