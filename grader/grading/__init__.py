"""Grading a class: submissions unpacked safely (submission), built (build), the grading
settings (config), scores by the rubric (rubric), and what staff and students read
(gradebook: results.json, the student page, gradebook.csv, the leaderboard).

May import: grader.sweep, grader.jail, grader.data, grader.tomlfile, sssp_common, reference.
Nothing of grader.commands.
"""
