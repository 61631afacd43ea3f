"""The engine: executor, frame, tasks, dispatch, commands, sessions, queue, config, shell. No pygls here."""
