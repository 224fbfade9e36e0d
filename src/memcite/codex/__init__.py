"""memcite inside Codex: the edits ``setup codex`` makes, the checks of ``doctor``, and the
body of the ``Stop``/``SubagentStop`` hook. Below the CLI, which only parses and prints."""
