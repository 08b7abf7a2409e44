"""Code similarity between submissions: winnowing fingerprints (Schleimer, Wilkerson and Aiken,
"Winnowing: local algorithms for document fingerprinting", the scheme MOSS uses).

Each submission's C/C++/CUDA sources become one token stream in which every identifier is the
same token (renaming variables changes nothing), literals are one token per kind and comments
and layout vanish. Every k consecutive tokens are hashed; in each window of w hashes the
smallest is kept (a fingerprint). Any shared run of at least k + w - 1 tokens is guaranteed a
shared fingerprint, and since a fingerprint set has no order, moving functions around only
loses the few k-grams that straddle a function's edge.

Fingerprints found in the course's sample code (--sample-code) are dropped, and so are those
more than half the class shares (at least four students): that is the assignment's own
skeleton, not copying. A pair's score is the Jaccard index of the two remaining sets; each
side's containment (the share of its fingerprints found in the other) is reported too.

Bounded on hostile sources: at most MAX_FILE_BYTES per file and MAX_STUDENT_BYTES per student
are read, tokenising stops at MAX_TOKENS, and each fingerprint keeps at most MAX_PLACES places
(10 MB of one token repeated once took 66 s and wrote a 52 MB fingerprint file); a student
who hits a cap has it said in `Fingerprints.capped` (kept in the fingerprint file and the result).

Why not `copydetect` (PyPI, the same winnowing): it compares files, not a student's whole token
stream; it tokenises each file whole with Pygments, with no per-student byte or token cap, so
these caps would wrap it all the same; it brings Pygments and its HTML report with it, and the
GPU machine has no network to fetch them. This is ~250 lines of the standard library.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

SOURCE_SUFFIXES = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl")
MAX_FILE_BYTES = 1 << 20          # a generated or vendored giant is not the student's code
MAX_FILES = 400
MAX_STUDENT_BYTES = 2 << 20       # of sources read per student (a CUDA solution is ~50 KB)
MAX_TOKENS = 100_000              # per student (~15,000 in a 50 KB solution): ~22,000 fingerprints at most
MAX_PLACES = 3                    # places kept per fingerprint (regions read the first)
K = 12                            # tokens per k-gram
CROWD_MIN = 4                     # skeleton: shared by more than half the class and by at least this many
WINDOW = 8                        # hashes per winnowing window: shared runs of >= 19 tokens always show

# Words that keep their identity: changing them changes the program's meaning.
KEYWORDS = frozenset("""
alignas alignof asm auto bool break case catch char char16_t char32_t class const constexpr const_cast
continue decltype default delete do double dynamic_cast else enum explicit extern false float for friend
goto if inline int long mutable namespace new noexcept nullptr operator private protected public register
reinterpret_cast return short signed sizeof static static_assert static_cast struct switch template this
throw true try typedef typeid typename union unsigned using virtual void volatile while size_t
__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __forceinline__ __noinline__
__launch_bounds__ __syncthreads __syncwarp __threadfence threadIdx blockIdx blockDim gridDim warpSize
atomicMin atomicAdd atomicExch atomicCAS atomicOr atomicAnd __ballot_sync __shfl_sync __shfl_down_sync
__shfl_up_sync __popc __ffs __any_sync __all_sync
""".split())

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<pre>\#[ \t]*\w+)
  | (?P<string>"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)
  | (?P<number>(?:0[xX][0-9a-fA-F']+|\d[\d']*\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[uUlLfF]*)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<op><<<|>>>|<<=|>>=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|[^\s\w])
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class Token:
    text: str      # normalised: "V" for identifiers, "N" numbers, "S" strings, else the token itself
    file: str
    line: int


def tokenize(source: str, file: str = "", limit: int | None = None) -> list[Token]:
    """The normalised tokens of one C/C++/CUDA file (comments and layout dropped), at most limit."""
    tokens, line = [], 1
    for match in _TOKEN.finditer(source):
        if limit is not None and len(tokens) >= limit:
            break
        kind, text = match.lastgroup, match.group()
        if kind in ("space", "comment"):
            pass
        elif kind == "word":
            tokens.append(Token(text if text in KEYWORDS else "V", file, line))
        elif kind == "number":
            tokens.append(Token("N", file, line))
        elif kind == "string":
            tokens.append(Token("S", file, line))
        elif kind == "pre":
            tokens.append(Token("#" + text[1:].strip(), file, line))
        else:
            tokens.append(Token(text, file, line))
        line += text.count("\n")
    return tokens


@dataclass
class Fingerprints:
    """Hash -> where it occurs: (file, first line, last line) of its first MAX_PLACES k-grams;
    capped: what was left out (a cap reached), '' when nothing was."""
    where: dict[int, list[tuple[str, int, int]]] = field(default_factory=dict)
    capped: str = ""

    def hashes(self) -> set[int]:
        return set(self.where)


def _hash(texts: list[str]) -> int:
    return int.from_bytes(hashlib.blake2b("\x1f".join(texts).encode(), digest_size=8).digest(), "big")


def fingerprint(tokens: list[Token], k: int = K, window: int = WINDOW, into: Fingerprints | None = None) -> Fingerprints:
    """Winnowing: in every window of `window` consecutive k-gram hashes keep the rightmost minimum."""
    found = into if into is not None else Fingerprints()
    if len(tokens) < k:
        return found
    texts = [t.text for t in tokens]
    hashes = [_hash(texts[i:i + k]) for i in range(len(tokens) - k + 1)]
    chosen = -1
    for start in range(max(1, len(hashes) - window + 1)):
        span = range(start, min(start + window, len(hashes)))
        best = min(span, key=lambda i: (hashes[i], -i))
        if best != chosen:
            chosen = best
            first, last = tokens[best], tokens[best + k - 1]
            places = found.where.setdefault(hashes[best], [])
            if len(places) < MAX_PLACES:
                places.append((first.file, first.line, last.line))
    return found


def source_files(tree: Path) -> list[Path]:
    """The C/C++/CUDA sources under tree (no links followed, giants and hidden folders skipped)."""
    files = []
    for folder, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        for name in sorted(names):
            path = Path(folder) / name
            if path.suffix.lower() in SOURCE_SUFFIXES and not path.is_symlink() and path.is_file() \
                    and path.stat().st_size <= MAX_FILE_BYTES:
                files.append(path)
            if len(files) >= MAX_FILES:
                return files
    return files


def read_capped(path: Path, limit: int) -> tuple[str, int, bool]:
    """At most limit bytes of a file (never through a link): as text, how many, whether it was cut."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    return data[:limit].decode("utf-8", errors="replace"), min(len(data), limit), len(data) > limit


def fingerprint_tree(tree: Path, k: int = K, window: int = WINDOW) -> Fingerprints:
    """One student's fingerprints: their sources in order, read up to MAX_STUDENT_BYTES in all
    and tokenised up to MAX_TOKENS in all; what a cap left out is said in `capped`."""
    found, tokens, left, notes = Fingerprints(), [], MAX_STUDENT_BYTES, []
    for path in source_files(tree):
        if left <= 0 or len(tokens) >= MAX_TOKENS:
            notes.append(f"sources from {path.relative_to(tree)} on not read")
            break
        try:
            text, size, cut = read_capped(path, left)
        except OSError:
            continue
        left -= size
        if cut:
            notes.append(f"{path.relative_to(tree)} read only in part ({MAX_STUDENT_BYTES} bytes of sources "
                         f"are read per student)")
        tokens += tokenize(text, str(path.relative_to(tree)), limit=MAX_TOKENS - len(tokens))
        if len(tokens) >= MAX_TOKENS:
            notes.append(f"tokens past the first {MAX_TOKENS} not compared (reached in {path.relative_to(tree)})")
    # one stream per file, as before: k-grams never straddle two files
    by_file: dict[str, list[Token]] = {}
    for token in tokens:
        by_file.setdefault(token.file, []).append(token)
    for file_tokens in by_file.values():
        fingerprint(file_tokens, k, window, into=found)
    found.capped = "; ".join(dict.fromkeys(notes))
    return found


@dataclass(frozen=True)
class Region:
    """A stretch of matching code: lines a_first..a_last of a_file match b_first..b_last of b_file."""
    a_file: str
    a_first: int
    a_last: int
    b_file: str
    b_first: int
    b_last: int
    fingerprints: int

    def describe(self) -> str:
        return f"{self.a_file}:{self.a_first}-{self.a_last} ~ {self.b_file}:{self.b_first}-{self.b_last}"


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    score: float              # Jaccard index of the two fingerprint sets (after exclusions)
    a_in_b: float             # share of a's fingerprints found in b
    b_in_a: float
    shared: int
    regions: tuple[Region, ...]

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "score": round(self.score, 4), "a_in_b": round(self.a_in_b, 4),
                "b_in_a": round(self.b_in_a, 4), "shared_fingerprints": self.shared,
                "regions": [r.__dict__ | {"text": r.describe()} for r in self.regions]}


def to_json(found: Fingerprints) -> dict:
    """Fingerprints as JSON (hash keys as hex, and "capped" when a cap was reached): kept per
    student so a later session compares the class."""
    data = {format(h, "016x"): [list(place) for place in places] for h, places in found.where.items()}
    return {**data, "capped": found.capped} if found.capped else data


def from_json(data: dict) -> Fingerprints:
    """The fingerprints of to_json (anything else in the file is left out: it is ours, but checked)."""
    where = {}
    for key, places in data.items():
        if len(key) == 16 and all(c in "0123456789abcdef" for c in key) and isinstance(places, list):
            kept = [tuple(place) for place in places[:MAX_PLACES] if isinstance(place, list) and len(place) == 3]
            if kept:
                where[int(key, 16)] = kept
    capped = data.get("capped")
    return Fingerprints(where, capped if isinstance(capped, str) else "")


def regions(shared: set[int], a: Fingerprints, b: Fingerprints, gap: int = 3, limit: int = 12) -> tuple[Region, ...]:
    """Matching fingerprints merged into stretches that run on in both files (lines within `gap`),
    largest first."""
    hits = sorted((a.where[h][0], b.where[h][0]) for h in shared)
    merged: list[list] = []
    for (af, a1, a2), (bf, b1, b2) in hits:
        last = merged[-1] if merged else None
        if last and last[0] == af and last[3] == bf and a1 <= last[2] + gap and abs(b1 - last[5]) <= gap + (a2 - a1) + 8:
            last[2], last[4], last[5] = max(last[2], a2), min(last[4], b1), max(last[5], b2)
            last[6] += 1
        else:
            merged.append([af, a1, a2, bf, b1, b2, 1])
    merged.sort(key=lambda r: (-r[6], r[0], r[1]))
    return tuple(Region(*r) for r in merged[:limit])


def compare(trees: dict[str, Path], sample_code: Path | None = None, top: int = 20,
            common_share: float = 0.5) -> list[Pair]:
    """Every pair of submissions (name -> source folder), most similar first, at most `top`."""
    prints = {name: fingerprint_tree(tree) for name, tree in sorted(trees.items())}
    return rank(prints, fingerprint_tree(sample_code).hashes() if sample_code else set(), top, common_share)


def rank(prints: dict[str, Fingerprints], excluded: set[int] = frozenset(), top: int = 20,
         common_share: float = 0.5) -> list[Pair]:
    """The pairs from fingerprints already taken (pure: testable without files)."""
    counts: dict[int, int] = {}
    for found in prints.values():
        for h in found.where:
            counts[h] = counts.get(h, 0) + 1
    crowd = max(CROWD_MIN, int(common_share * len(prints)) + 1)
    skeleton = {h for h, n in counts.items() if n >= crowd} | set(excluded)
    kept = {name: found.hashes() - skeleton for name, found in prints.items()}
    pairs = []
    for a, b in combinations(sorted(prints), 2):
        shared = kept[a] & kept[b]
        union = kept[a] | kept[b]
        if not union:
            continue
        pairs.append(Pair(a, b, len(shared) / len(union), len(shared) / max(1, len(kept[a])),
                          len(shared) / max(1, len(kept[b])), len(shared),
                          regions(shared, prints[a], prints[b]) if shared else ()))
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs[:top]
