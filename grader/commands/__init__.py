"""The grader's subcommands, one file each (`HELP`, `add_arguments`, `run_from_args`, a plain
`run()`), and the options several share (options). The top: may import every grader package."""
