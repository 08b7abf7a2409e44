"""Report: sweep results (results/*.jsonl) → tables, observations and plots → report.md / report.html / tables.tex."""
