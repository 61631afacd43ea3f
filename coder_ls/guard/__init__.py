"""The guards of both boundaries: what a cloned workspace may do, and what the agent may do.

Trust (the untrusted-workspace gate), the administrator's managed layer, the refused-command
check and the shell parser behind it, the agent shell's sandbox (bubblewrap, Landlock) and the
lifetime of the processes the server starts, git on a hostile repository, the protected paths,
where an export may write, who may run what (input origins), and the redaction of secrets.
Nothing here imports the engine, the commands or the agent.
"""
