"""`python -m grader grade SUBMISSION... --out DIR`: build and run students' submissions, isolated, over
the grading matrix; score them; write results.json and index.html per student and a gradebook.

Per submission: unpack safely (grader.grading.submission), key it by its content (grader.sweep.identity),
build it in the sandbox (grader.grading.build), run every cell of the matrix with the same runner
as `grader sweep` (grader.sweep.cellrun), score with the rubric (grader.grading.rubric) after every run,
and rewrite DIR/<student>/results.json atomically. Runs go to DIR/runs.jsonl (a lock keeps a
second grader off it); a rerun skips every run a submission with the same content has done.
The class files (gradebook.csv, leaderboard.csv) are rebuilt from every student folder in DIR,
so grading one student again, or a late one, keeps the class. The report's score is staff's:
DIR/report_scores.csv (grader.grading.manual).

The work is grader.grading.classgrade's (the class) and grader.grading.student's (one student);
this file is the parser. Exit status: EXIT_STATUS below.
"""
from __future__ import annotations

from pathlib import Path

from grader.commands.options import add_matrix_arguments
from grader.grading.classgrade import DEFAULT_CONFIG, EXIT_STATUS, INTERRUPTED, REFUSED, grade_class
from grader.grading.lms import DEFAULT_ASSIGNMENT, SYSTEMS
from grader.grading.privacy import SHARE_CHOICES

HELP = "build, run and score students' submissions (Gradescope results.json, gradebook.csv)"
__all__ = ["DEFAULT_CONFIG", "INTERRUPTED", "REFUSED", "add_arguments", "run", "run_from_args"]


def add_arguments(parser) -> None:
    parser.epilog = EXIT_STATUS
    parser.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION",
                        help="a submission folder or .tgz/.tar.gz/.zip, or a folder of them (one per student)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="where results go")
    add_matrix_arguments(parser, default_config=str(DEFAULT_CONFIG))
    parser.add_argument("--rubric", type=Path, metavar="PATH", help="a rubric instead of the config's (default "
                        "configs/rubric.toml, the spec's weights; configs/rubric-gate.toml: the spec's literal "
                        "0 for any failed correctness test)")
    parser.add_argument("--nvcc", metavar="PATH", help="compatibility: rewrite hard-coded nvcc paths in Makefiles to PATH")
    parser.add_argument("--arch", metavar="sm_XX", help="compatibility: rewrite -arch/-gencode flags in Makefiles to -arch=sm_XX")
    parser.add_argument("--force", action="store_true", help="build and run again even what is already graded")
    parser.add_argument("--unsafe", action="store_true",
                        help="build and run WITHOUT the bubblewrap jail (said on the console and in every record): "
                             "a submission can then read and run what the sandbox user can reach")
    parser.add_argument("--share", choices=SHARE_CHOICES, default="none",
                        help="who may read DIR once grading ends: none (the grader's user only, the default), "
                             "the group, or all; while grading it is the grader's user's alone")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="correctness runs of different students N at a time on one GPU (admitted by free GPU memory), timing runs (the largest graph's) alone; builds beside the runs (default 1: one run at a time)")
    parser.add_argument("--mps", action="store_true",
                        help="each student's runs as clients of an MPS daemon of their own (their uid), one student "
                             "at a time per GPU, the next students building meanwhile (also [grading] mps = true; "
                             "the daemon: $GRADER_MPS_CONTROL, PATH or /usr/local/nvidia/bin)")
    parser.add_argument("--sample-code", type=Path, metavar="DIR",
                        help="the course's sample code: left out of the similarity check")
    parser.add_argument("--sanitizer", metavar="PATH", help="the compute-sanitizer to diagnose failures with (default: on PATH or in /usr/local/cuda/bin, when a GPU is visible)")
    parser.add_argument("--no-diagnosis", action="store_true", help="no compute-sanitizer runs")
    parser.add_argument("--lms", choices=SYSTEMS, help="also write DIR/gradebook-LMS.csv in that system's grade-import "
                        "format (student id columns, one assignment column); needs --roster")
    parser.add_argument("--roster", type=Path, metavar="FILE", help="CSV mapping each student's folder name (column "
                        "'folder') to the LMS's ids (Canvas: ID / SIS User ID / SIS Login ID, and Student, Section; "
                        "Moodle: ID number / Email address / Username)")
    parser.add_argument("--assignment", metavar="NAME", default=DEFAULT_ASSIGNMENT,
                        help="the export's assignment column (Canvas: 'Name (id)' as its gradebook export writes it, "
                             f"so the import fills that assignment; default {DEFAULT_ASSIGNMENT!r})")
    parser.add_argument("--no-shrink", action="store_true",
                        help="no counterexamples (each wrong method shrunk to its smallest failing graph; the "
                             "right ones tried on small random graphs)")


def run_from_args(args) -> int:
    return run(args.submissions, out=args.out, config=args.config, scale=args.scale, graphs=args.graphs,
               methods=args.methods, reps=args.reps, timeout=args.timeout, cache_dir=args.cache_dir,
               quiet=args.quiet, nvcc=args.nvcc, arch=args.arch, force=args.force, unsafe=args.unsafe, share=args.share,
               jobs=args.jobs, sample_code=args.sample_code, sanitizer=args.sanitizer,
               diagnose=not args.no_diagnosis, shrink=not args.no_shrink,
               executor=args.executor, workers=args.workers, scheduler=args.scheduler, rubric=args.rubric,
               lms=args.lms, roster=args.roster, assignment=args.assignment, mps=args.mps)


def run(submissions, out: Path, **options) -> int:
    """The class graded (grader.grading.classgrade.grade_class): its exit status."""
    return grade_class(submissions, out, **options)
