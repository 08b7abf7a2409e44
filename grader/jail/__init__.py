"""Isolation: one contained process per build and per run of a program the grader does not
trust, and nothing of it left behind afterwards (its descendants, its files, its uid's processes).

Owns: deciding what protections this machine allows (sandbox), applying them (child), the
bubblewrap jail every build and run of a submission gets (bwrap) and its seccomp filter
(seccomp), a uid per jail leased
machine-wide (uids), cgroup limits (cgroups), killing what a run left (reaper), and running one
command under all of it, its output read with caps (runner).

May import: the standard library and sssp_common. Nothing else of the grader's.
"""
