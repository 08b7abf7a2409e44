"""Every CSV the grader writes (gradebook, leaderboard, report_scores, the LMS exports), made
safe to open in a spreadsheet.

Student ids come from folder and file names, report facts from what a submission holds: text a
student chose. A cell that starts with = + - @, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets (`=HYPERLINK(...)`, `@SUM(...)`, DDE payloads), so, as OWASP's
CSV-injection advice says, such a text cell gets a leading single quote, which spreadsheets show
as text; the csv module quotes separators, quotes and line breaks. Numbers the grader computed
are written as they are (a negative number is not a formula). `plain` undoes the quote when the
grader reads its own file back (report_scores.csv).

Pure: cells in, text out.
"""
from __future__ import annotations

import csv
import io

# OWASP: cells beginning with these are evaluated; leading blanks do not stop some spreadsheets.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def safe_cell(value):
    """value, with a text that a spreadsheet would evaluate prefixed by a single quote."""
    if not isinstance(value, str):
        return "" if value is None else value
    if value.lstrip(" \n")[:1] in FORMULA_STARTS or value[:1] in FORMULA_STARTS:
        return QUOTE + value
    return value


def plain(value: str) -> str:
    """A cell read back from a file safe_cell wrote: its defusing quote taken off."""
    if value.startswith(QUOTE) and safe_cell(value[1:]) == value:
        return value[1:]
    return value


def csv_text(header: list, rows: list[list]) -> str:
    """A whole CSV file's text: the header and every row through safe_cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([safe_cell(cell) for cell in header])
    for row in rows:
        writer.writerow([safe_cell(cell) for cell in row])
    return buffer.getvalue()
