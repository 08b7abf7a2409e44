"""LaTeX for tables.tex: escaping, cells, and a size for each table that fits the USENIX page.

Why estimate widths here: `\\input{tables.tex}` must compile whole in a two-column 10pt
paper. A table goes in one column when it fits there, across both (table*) when it does
not, and gets a smaller font only when even the page width is too narrow; an estimate
from the cell texts (generous per-character widths) decides, and the test compiling
tables.tex checks the log for overfull boxes.
"""
from __future__ import annotations

import re
import unicodedata

from .cells import MISSING, TextCell

LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
                  "%": r"\%", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "×": r"$\times$", "–": "--", "—": "---", "·": r"$\cdot$", "✗": "", "⚠": "",
                  "†": r"$^\dagger$", "→": r"$\rightarrow$", "²": r"$^2$",
                  "≈": r"$\approx$", "≥": r"$\geq$", "≤": r"$\leq$", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}", "…": r"\ldots{}", "’": "'", "“": "``", "”": "''"}
LATEX_PATTERN = re.compile("|".join(re.escape(k) for k in LATEX_SPECIALS))

# USENIX template: 7in text width, two 3.33in columns (points).
COLUMN_PT = 236.0
TEXT_PT = 500.0
# (font command, width of an average character of a cell in pt, of a \scriptsize-relative range)
SIZES = (("\\footnotesize", 4.6), ("\\scriptsize", 4.1), ("\\tiny", 3.2))
TABCOLSEP_PT = 4.0


def _ascii(text: str) -> str:
    """Accented letters to their base letter; any other non-ASCII sign to '?' (pdflatex would stop)."""
    out = []
    for char in text:
        if ord(char) < 128:
            out.append(char)
            continue
        base = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
        out.append(base or "?")
    return "".join(out)


def latex_escape(text) -> str:
    """Escape LaTeX's special characters and the few Unicode signs the tables use."""
    escaped = LATEX_PATTERN.sub(lambda m: LATEX_SPECIALS[m.group(0)], str(text)).strip()
    return _ascii(escaped)


def latex_cell(cell) -> str:
    """A cell as LaTeX: median with a small [min--max], failures in italics, missing as an en dash."""
    if isinstance(cell, TextCell):
        if cell.text == MISSING:
            return "--"
        text = latex_escape(cell.text)
        return r"\textit{" + text + "}" if cell.state == "failed" and text else text
    state = cell.state
    if state == "missing":
        return "--"
    if state == "failed":
        return r"\textit{" + latex_escape(cell.failure_text) + "}"
    text = latex_escape(cell.value_text)
    if cell.spread_text:
        text += r"\,{\scriptsize[" + latex_escape(cell.spread_text) + "]}"
    if cell.outliers:
        text += latex_escape(cell.outlier_mark)
    if state == "mixed":
        text += r" {\scriptsize\textit{(" + latex_escape(cell.failure_text) + ")}}"
    return text


def _visible_length(cell) -> float:
    """Characters a cell prints, a [range] counted at 80% (it is set smaller)."""
    if isinstance(cell, TextCell) or not hasattr(cell, "value_text"):
        return len(str(cell.text))
    state = cell.state
    if state in ("missing", "failed"):
        return len(cell.text)
    length = len(cell.value_text) + (0.8 * (len(cell.spread_text) + 2) if cell.spread_text else 0)
    if state == "mixed":
        length += 0.8 * (len(cell.failure_text) + 3)
    return length + (2 if cell.outliers else 0)


def estimated_width(table, char_pt: float) -> float:
    """Natural width of the tabular in pt at a font whose average character is char_pt wide."""
    widths = [max([len(table.row_header)] + [len(label) for label, _ in table.rows])]
    for index, column in enumerate(table.columns):
        widths.append(max([len(column)] + [_visible_length(cells[index]) for _, cells in table.rows]))
    return sum(w * char_pt + 2 * TABCOLSEP_PT for w in widths)


def latex_layout(table) -> dict:
    """{'env': 'table' or 'table*', 'size': font command, 'place': placement} for a table."""
    for size, char_pt in SIZES[:2]:
        if estimated_width(table, char_pt) <= COLUMN_PT:
            return {"env": "table", "size": size, "place": "tbp"}
    for size, char_pt in SIZES:
        if estimated_width(table, char_pt) <= TEXT_PT:
            return {"env": "table*", "size": size, "place": "tp"}
    return {"env": "table*", "size": SIZES[-1][0], "place": "tp"}


def latex_column_spec(table) -> str:
    return "l" + "r" * len(table.columns)


def latex_group_rules(table) -> str:
    """\\cmidrule under each column group."""
    rules, start = [], 2
    for _, span in table.column_groups:
        rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
        start += span
    return "".join(rules)
