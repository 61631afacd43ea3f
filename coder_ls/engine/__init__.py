"""The engine: executor, dispatch, commands, sessions, shell, policy. No pygls here."""
