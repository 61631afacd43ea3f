"""Steps that run apart from the user's tree (contract section 25): a git worktree per step
(`worktrees.py`), and the one way a step's change comes back (`patches.py`)."""
