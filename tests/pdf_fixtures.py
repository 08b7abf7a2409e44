"""A minimal PDF writer for the grader's report tests: one page per text, lines in Helvetica
(no PDF library needed to make one, so the tests can check the one that reads it)."""
from __future__ import annotations


def _escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[str]) -> bytes:
    """A valid PDF whose page i shows pages[i] line by line."""
    kids = [4 + 2 * i for i in range(len(pages))]
    objects = {1: "<< /Type /Catalog /Pages 2 0 R >>",
               2: f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(pages)} >>",
               3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    for kid, text in zip(kids, pages):
        stream = "BT /F1 11 Tf 14 TL 72 720 Td " + " ".join(f"({_escaped(line)}) Tj T*" for line in text.split("\n")) + " ET"
        objects[kid] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                        f"/Resources << /Font << /F1 3 0 R >> >> /Contents {kid + 1} 0 R >>")
        objects[kid + 1] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n{objects[number]}\nendobj\n".encode("latin-1")
    size = max(objects) + 1
    start = len(out)
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[n]:010d} 00000 n \n".encode() for n in range(1, size))
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{start}\n%%EOF\n".encode()
    return bytes(out)


def paper(body_pages: int, references_partway: bool = False) -> bytes:
    """A report of body_pages full pages, then a page that starts (or, references_partway,
    ends) with the References heading."""
    body = [f"{i + 1} Section\n" + "\n".join(f"Body text line {j} of page {i + 1}, about bmf and tpe." for j in range(40))
            for i in range(body_pages)]
    if references_partway:
        last = "\n".join(f"Conclusion line {j}." for j in range(30)) + "\nReferences\n[1] Blelloch. Prefix sums."
    else:
        last = "References\n[1] Blelloch. Prefix sums and their applications.\n[2] Davidson et al. 2014."
    return pdf_bytes(body + [last])
