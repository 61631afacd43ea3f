"""The engine: executor, frame, tasks, dispatch, sessions, queue, config, shell. No pygls here."""
